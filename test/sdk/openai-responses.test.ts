// The official `openai` package reading Responses-style answers: refusals, reasoning, usage details, the
// status of items cut short, the gateway's own refusals of malformed requests, and stored responses.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import {
  anthropicTestModel,
  startTestGateway,
  testModel,
  type TestGateway,
} from '../helpers/gateway.ts'
import { describeWith } from '../helpers/services.ts'

const models = [
  testModel('openai/plain', 'fake?tokens=6'),
  testModel('openai/cached', 'fake?tokens=6&prompt=20&cached=4'),
  testModel('openai/long', 'fake?tokens=40&honour=1'),
  testModel('openai/reasoning', 'fake?tokens=6&reasoning=4'),
  testModel('openai/refusal', 'fake?tokens=5&refusal=1'),
  testModel('openai/text-then-refusal', 'fake?replay=openai/text-then-refusal'),
  anthropicTestModel('anthropic/plain', 'fake?tokens=6'),
  anthropicTestModel('anthropic/long', 'fake?tokens=40&honour=1'),
  anthropicTestModel('anthropic/cached', 'fake?tokens=6&prompt=20&cached=4&cacheWrite=10'),
]

describeWith('postgres', 'openai SDK over the Responses style', () => {
  let gw: TestGateway
  let client: OpenAI
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres', models })
    const { apiUrl } = gw.app.listen()
    const key = (await gw.key(await gw.account('10'))).key
    client = new OpenAI({ baseURL: `${apiUrl}/v1`, apiKey: key, maxRetries: 0 })
  })
  afterAll(() => gw.close())

  const refusal = async (promise: Promise<unknown>) => {
    try {
      await promise
    } catch (caught) {
      return caught as InstanceType<typeof OpenAI.APIError>
    }
    throw new Error('expected an error')
  }

  describe('a refusal', () => {
    const city = {
      type: 'json_schema' as const,
      name: 'city',
      strict: true,
      schema: {
        type: 'object',
        properties: { city: { type: 'string' } },
        required: ['city'],
        additionalProperties: false,
      },
    }
    const refused = [{ type: 'refusal' as const, refusal: 'w0 w1 w2 w3 w4 ' }]

    test('is a refusal part of the message, never output text', async () => {
      const response = await client.responses.create({ model: 'openai/refusal', input: 'hi' })
      expect(response.status).toBe('completed')
      expect(response.output).toHaveLength(1)
      expect(response.output[0]).toMatchObject({ type: 'message', content: refused })
      expect(response.output_text).toBe('')
      expect((await client.responses.retrieve(response.id)).output).toEqual(response.output)
    })

    test('parsing a structured output skips it instead of failing on JSON', async () => {
      const parsed = await client.responses.parse({
        model: 'openai/refusal',
        input: 'hi',
        text: { format: city },
      })
      expect(parsed.output_parsed).toBeNull()
      expect(parsed.output[0]).toMatchObject({ content: refused })
    })

    test('streamed: its part is added, filled by refusal deltas, and done, as the item is', async () => {
      const stream = client.responses.stream({
        model: 'openai/refusal',
        input: 'hi',
        text: { format: city },
      })
      const events: OpenAI.Responses.ResponseStreamEvent[] = []
      for await (const event of stream) events.push(event)
      const final = await stream.finalResponse()
      expect(events.map((event) => event.type)).toEqual([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        ...Array(5).fill('response.refusal.delta'),
        'response.refusal.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ])
      const of = <T extends OpenAI.Responses.ResponseStreamEvent['type']>(type: T) =>
        events.find((event) => event.type === type) as Extract<
          OpenAI.Responses.ResponseStreamEvent,
          { type: T }
        >
      expect(of('response.content_part.added').part).toEqual({ type: 'refusal', refusal: '' })
      expect(of('response.refusal.done').refusal).toBe('w0 w1 w2 w3 w4 ')
      expect(of('response.content_part.done').part).toEqual(refused[0]!)
      expect(of('response.output_item.done').item).toMatchObject({ content: refused })
      expect(final.output[0]).toMatchObject({ content: refused })
      expect(final.output_text).toBe('')
      expect(final.output_parsed).toBeNull()
    })

    test('after some text, the same message holds the text and then the refusal, each a part', async () => {
      const stream = client.responses.stream({ model: 'openai/text-then-refusal', input: 'hi' })
      const types: string[] = []
      for await (const event of stream) types.push(event.type)
      const final = await stream.finalResponse()
      expect(types.slice(2)).toEqual([
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.delta',
        'response.output_text.done',
        'response.content_part.done',
        'response.content_part.added',
        'response.refusal.delta',
        'response.refusal.delta',
        'response.refusal.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ])
      expect(final.output).toHaveLength(1)
      expect(final.output[0]).toMatchObject({
        content: [
          { type: 'output_text', text: 'Here is a start. ' },
          { type: 'refusal', refusal: "I can't help with that." },
        ],
      })
      expect(final.output_text).toBe('Here is a start. ')
    })
  })

  describe('reasoning', () => {
    test('effort reaches an OpenAI-style provider as reasoning_effort; the response echoes it and counts reasoning tokens', async () => {
      const whole = await client.responses.create({
        model: 'openai/reasoning',
        input: 'hi',
        reasoning: { effort: 'high' },
      })
      expect(gw.upstream.requests.at(-1)!.body.reasoning_effort).toBe('high')
      const streamed = await client.responses
        .stream({ model: 'openai/reasoning', input: 'hi', reasoning: { effort: 'low' } })
        .finalResponse()
      expect(gw.upstream.requests.at(-1)!.body.reasoning_effort).toBe('low')
      expect(whole.reasoning).toEqual({ effort: 'high', summary: null })
      expect(streamed.reasoning).toEqual({ effort: 'low', summary: null })
      for (const response of [whole, streamed]) {
        expect(response.usage!.output_tokens).toBe(6)
        expect(response.usage!.output_tokens_details.reasoning_tokens).toBe(4)
      }
    })

    test('without reasoning settings, none are sent and the response says null', async () => {
      const response = await client.responses.create({ model: 'openai/plain', input: 'hi' })
      expect(gw.upstream.requests.at(-1)!.body).not.toHaveProperty('reasoning_effort')
      expect(response.reasoning).toBeNull()
      expect(response.usage!.output_tokens_details.reasoning_tokens).toBe(0)
    })

    test('a Messages-style provider is not sent the effort, which it has no field for', async () => {
      const response = await client.responses.create({
        model: 'anthropic/plain',
        input: 'hi',
        reasoning: { effort: 'high' },
      })
      expect(response.status).toBe('completed')
      expect(response.reasoning).toEqual({ effort: 'high', summary: null })
      const sent = gw.upstream.requests.at(-1)!.body
      expect(sent).not.toHaveProperty('reasoning_effort')
      expect(sent).not.toHaveProperty('reasoning')
    })
  })

  describe('usage details', () => {
    const cases = [
      ['anthropic/cached', { cached_tokens: 4, cache_write_tokens: 10 }, 20],
      ['openai/cached', { cached_tokens: 4, cache_write_tokens: 0 }, 20],
    ] as const
    for (const [model, details, input] of cases) {
      test(`cache reads and writes as the provider reported them (${model}), streamed or not`, async () => {
        const whole = await client.responses.create({ model, input: 'hi' })
        const streamed = await client.responses.stream({ model, input: 'hi' }).finalResponse()
        for (const response of [whole, streamed]) {
          expect(response.usage!.input_tokens).toBe(input)
          expect(response.usage!.input_tokens_details).toEqual(details)
          expect(response.usage!.total_tokens).toBe(input + 6)
        }
      })
    }
  })

  describe('an answer cut short', () => {
    for (const model of ['openai/long', 'anthropic/long']) {
      test(`at max_output_tokens, its item is incomplete in every event that carries it (${model})`, async () => {
        const stream = client.responses.stream({ model, input: 'hi', max_output_tokens: 16 })
        const done: string[] = []
        for await (const event of stream)
          if (event.type === 'response.output_item.done')
            done.push((event.item as { status: string }).status)
        const streamed = await stream.finalResponse()
        const whole = await client.responses.create({ model, input: 'hi', max_output_tokens: 16 })
        expect(done).toEqual(['incomplete'])
        for (const response of [streamed, whole]) {
          expect(response.status).toBe('incomplete')
          expect(response.incomplete_details).toEqual({ reason: 'max_output_tokens' })
          expect(response.output.map((item) => (item as { status: string }).status)).toEqual([
            'incomplete',
          ])
        }
      })
    }
  })

  describe('malformed requests are refused by the gateway, naming the field, before any provider sees them', () => {
    const refusedBefore = async (
      body: Record<string, unknown>,
      param: string,
    ): Promise<InstanceType<typeof OpenAI.APIError>> => {
      const sent = gw.upstream.requests.length
      const caught = await refusal(
        client.responses.create(
          body as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming,
        ),
      )
      expect(caught).toBeInstanceOf(OpenAI.BadRequestError)
      expect(caught.code).toBe('invalid_request')
      expect(caught.param).toBe(param)
      expect(caught.message).toContain(param)
      expect(gw.upstream.requests.length).toBe(sent)
      return caught
    }

    for (const model of ['openai/plain', 'anthropic/plain']) {
      test(`no input, or an empty one (${model})`, async () => {
        await refusedBefore({ model }, 'input')
        await refusedBefore({ model, input: [] }, 'input')
      })
    }

    test('a json_schema text format without its schema', async () => {
      await refusedBefore(
        {
          model: 'openai/plain',
          input: 'hi',
          text: { format: { type: 'json_schema', name: 'x' } },
        },
        'text.format.schema',
      )
    })

    test('sampling, tool and output options of the wrong type, named; null passes', async () => {
      for (const model of ['openai/plain', 'anthropic/plain']) {
        for (const [param, value] of [
          ['temperature', 'hot'],
          ['top_p', '0.5'],
          ['top_logprobs', 1.5],
          ['parallel_tool_calls', 'yes'],
          ['text', 'json'],
          ['reasoning', 'high'],
          ['metadata', 'user-1'],
        ] as const) {
          const caught = await refusedBefore({ model, input: 'hi', [param]: value }, param)
          expect(caught.message).toContain('must be')
        }
        const answered = await client.responses.create({
          model,
          input: 'hi',
          temperature: null,
          top_p: null,
          top_logprobs: null,
          parallel_tool_calls: null,
          reasoning: null,
          metadata: null,
        })
        expect(answered.status).toBe('completed')
      }
    })

    test('function call arguments that are not a JSON object, named by their item', async () => {
      const input = (args: string) => [
        { role: 'user', content: 'hi' },
        { type: 'function_call', call_id: 'call_1', name: 'f', arguments: args },
        { type: 'function_call_output', call_id: 'call_1', output: 'x' },
      ]
      await refusedBefore(
        { model: 'anthropic/plain', input: input('not json') },
        'input[1].arguments',
      )
      await refusedBefore({ model: 'openai/plain', input: input('[1]') }, 'input[1].arguments')
      const answered = await client.responses.create({
        model: 'anthropic/plain',
        input: input('{"a": 1}') as OpenAI.Responses.ResponseInput,
      })
      expect(answered.status).toBe('completed')
    })
  })

  describe('stored responses', () => {
    test('retrieving one as a stream is refused naming stream, not answered with JSON', async () => {
      const created = await client.responses.create({ model: 'openai/plain', input: 'hi' })
      const caught = await refusal(client.responses.retrieve(created.id, { stream: true }))
      expect(caught).toBeInstanceOf(OpenAI.BadRequestError)
      expect(caught.code).toBe('invalid_request')
      expect(caught.param).toBe('stream')
      expect(caught.message).toContain('stream')
      expect((await client.responses.retrieve(created.id)).id).toBe(created.id)
    })

    test("a follow-up's input items are the whole conversation before its answer, paged by the SDK", async () => {
      const first = await client.responses.create({
        model: 'openai/plain',
        input: [
          { role: 'developer', content: 'Be brief.' },
          { role: 'user', content: 'one' },
        ],
      })
      const second = await client.responses.create({
        model: 'anthropic/plain',
        input: 'two',
        previous_response_id: first.id,
      })
      const third = await client.responses.create({
        model: 'openai/plain',
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'three' },
              {
                type: 'input_image',
                image_url: 'data:image/png;base64,iVBORw0KGgo=',
                detail: 'auto',
              },
            ],
          },
        ],
        previous_response_id: second.id,
      })
      const items: OpenAI.Responses.ResponseItem[] = []
      // Two at a time, oldest first: the SDK follows `after` until `has_more` is false.
      for await (const item of client.responses.inputItems.list(third.id, {
        order: 'asc',
        limit: 2,
      }))
        items.push(item)
      const said = (item: OpenAI.Responses.ResponseItem) =>
        item.type === 'message'
          ? `${item.role}: ${item.content.map((part) => ('text' in part ? part.text : part.type)).join(' ')}`
          : item.type
      expect(items.map(said)).toEqual([
        'system: Be brief.',
        'user: one',
        `assistant: ${first.output_text}`,
        'user: two',
        `assistant: ${second.output_text}`,
        'user: three input_image',
      ])
      expect(new Set(items.map((item) => item.id)).size).toBe(items.length)
      // Newest first by default; the answer of the response itself is its output, not its input.
      const newest = await client.responses.inputItems.list(third.id, { limit: 1 })
      expect(newest.data.map(said)).toEqual(['user: three input_image'])
      expect(newest.has_more).toBe(true)
      // A response of another account, or none, is not found; a bad limit is refused naming it.
      expect(await refusal(client.responses.inputItems.list('resp_none'))).toBeInstanceOf(
        OpenAI.NotFoundError,
      )
      const bad = await refusal(client.responses.inputItems.list(third.id, { limit: 500 }))
      expect(bad).toBeInstanceOf(OpenAI.BadRequestError)
      expect(bad.param).toBe('limit')
    })
  })
})
