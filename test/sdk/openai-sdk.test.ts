// The official `openai` package (current major) driving the gateway, over providers of both styles:
// only the base URL, the key and the model ID differ from talking to the provider directly.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import {
  anthropicTestModel,
  startTestGateway,
  testModel,
  type TestGateway,
} from '../helpers/gateway.ts'
import { describeWith } from '../helpers/services.ts'
import { rejection } from '../helpers/settle.ts'

const models = [
  testModel('openai/plain', 'fake?tokens=6&cached=2'),
  testModel('openai/tools', 'fake?tools=1'),
  testModel('openai/parallel', 'fake?tools=2&argsChunks=4'),
  testModel('openai/broken', 'fake?tokens=10&errorAfter=2'),
  testModel('openai/failing', 'fake?status=500'),
  anthropicTestModel('anthropic/plain', 'fake?tokens=6&cached=2&cacheWrite=1'),
  anthropicTestModel('anthropic/tools', 'fake?tools=1'),
  anthropicTestModel('anthropic/parallel', 'fake?tools=2&argsChunks=4'),
]
const weather = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather at a place',
    parameters: {
      type: 'object',
      properties: { location: { type: 'string' } },
      required: ['location'],
    },
  },
}
const responsesWeather = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Weather at a place',
  parameters: weather.function.parameters,
  strict: false,
}

describeWith('postgres', 'openai SDK', () => {
  let gw: TestGateway
  let client: OpenAI
  let key: string
  let accountId: string
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres', models })
    const { apiUrl } = gw.app.listen()
    accountId = await gw.account('10')
    key = (await gw.key(accountId)).key
    client = new OpenAI({ baseURL: `${apiUrl}/v1`, apiKey: key, maxRetries: 0 })
  })
  afterAll(() => gw.close())

  for (const provider of ['openai', 'anthropic']) {
    describe(`chat completions over a provider of ${provider} style`, () => {
      test('non-streaming: the answer, its usage with cost, and the service headers', async () => {
        const { data, response } = await client.chat.completions
          .create({
            model: `${provider}/plain`,
            messages: [
              { role: 'system', content: 'Be brief.' },
              { role: 'user', content: 'Hello' },
            ],
            temperature: 0.2,
            max_tokens: 50,
          })
          .withResponse()
        expect(data.choices[0]!.message.content).toBe('w0 w1 w2 w3 w4 w5 ')
        expect(data.choices[0]!.finish_reason).toBe('stop')
        expect(data.usage!.completion_tokens).toBe(6)
        expect(data.usage!.prompt_tokens_details!.cached_tokens).toBe(2)
        if (provider === 'anthropic')
          expect(
            (data.usage!.prompt_tokens_details as { cache_write_tokens?: number })
              .cache_write_tokens,
          ).toBe(1)
        const cost = (data.usage as unknown as { cost: number }).cost
        expect(cost).toBeGreaterThan(0)
        expect(response.headers.get('x-service-cost-usd')).toBe(String(cost))
        expect(response.headers.get('x-service-model')).toBe(`${provider}/plain`)
        expect(Number(response.headers.get('x-service-balance-usd'))).toBeLessThan(10)
        expect(response.headers.get('x-request-id')).toMatch(/^req_/)
      })

      test('streaming with the stream helper: the final completion is assembled, usage carries cost', async () => {
        const stream = client.chat.completions.stream({
          model: `${provider}/plain`,
          messages: [{ role: 'user', content: 'Hello' }],
          stream_options: { include_usage: true },
        })
        let deltas = ''
        for await (const chunk of stream) deltas += chunk.choices[0]?.delta.content ?? ''
        const final = await stream.finalChatCompletion()
        expect(deltas).toBe('w0 w1 w2 w3 w4 w5 ')
        expect(final.choices[0]!.message.content).toBe(deltas)
        expect(final.choices[0]!.finish_reason).toBe('stop')
        expect((final.usage as unknown as { cost: number }).cost).toBeGreaterThan(0)
      })

      test('a tool round trip, streamed, with parallel calls and fragmented arguments', async () => {
        const messages: OpenAI.ChatCompletionMessageParam[] = [
          { role: 'user', content: 'Weather in Paris and Tokyo?' },
        ]
        const stream = client.chat.completions.stream({
          model: `${provider}/parallel`,
          messages,
          tools: [weather],
        })
        const first = await stream.finalChatCompletion()
        const calls = first.choices[0]!.message.tool_calls!
        expect(first.choices[0]!.finish_reason).toBe('tool_calls')
        expect(
          calls.map(
            (call) => call.type === 'function' && JSON.parse(call.function.arguments).location,
          ),
        ).toEqual(['Paris', 'Tokyo'])
        messages.push(first.choices[0]!.message as OpenAI.ChatCompletionMessageParam)
        for (const call of calls)
          messages.push({ role: 'tool', tool_call_id: call.id, content: '{"celsius": 21}' })
        const second = await client.chat.completions.create({
          model: `${provider}/parallel`,
          messages,
          tools: [weather],
        })
        expect(second.choices[0]!.finish_reason).toBe('stop')
        expect(second.choices[0]!.message.content).toContain('w0')
        // The provider received both results, attached to the calls' IDs.
        const sent = JSON.stringify(gw.upstream.requests.at(-1)!.body)
        for (const call of calls) expect(sent).toContain(call.id)
      })
    })

    describe(`responses over a provider of ${provider} style`, () => {
      test('non-streaming, with instructions: output_text and usage with cost', async () => {
        const response = await client.responses.create({
          model: `${provider}/plain`,
          instructions: 'Be brief.',
          input: 'Hello',
          max_output_tokens: 50,
        })
        expect(response.status).toBe('completed')
        expect(response.output_text).toBe('w0 w1 w2 w3 w4 w5 ')
        expect(response.usage!.output_tokens).toBe(6)
        expect((response.usage as unknown as { cost: number }).cost).toBeGreaterThan(0)
      })

      test('streaming with the stream helper, a function call, then a follow-up by previous_response_id', async () => {
        const stream = client.responses.stream({
          model: `${provider}/tools`,
          input: 'Weather in Paris?',
          tools: [responsesWeather],
        })
        const types = new Set<string>()
        for await (const event of stream) types.add(event.type)
        const first = await stream.finalResponse()
        expect(types.has('response.function_call_arguments.delta')).toBe(true)
        const call = first.output.find((item) => item.type === 'function_call')!
        expect(call.type === 'function_call' && call.name).toBe('get_weather')
        if (call.type !== 'function_call') throw new Error('expected a function call')
        const follow = await client.responses.create({
          model: `${provider}/tools`,
          previous_response_id: first.id,
          input: [
            { type: 'function_call_output', call_id: call.call_id, output: '{"celsius": 21}' },
          ],
          tools: [responsesWeather],
        })
        expect(follow.output_text).toContain('w0')
        expect(follow.previous_response_id).toBe(first.id)
        const sent = JSON.stringify(gw.upstream.requests.at(-1)!.body)
        expect(sent).toContain(call.call_id)
        expect(sent).toContain('Weather in Paris?')
        const stored = await client.responses.retrieve(follow.id)
        expect(stored.id).toBe(follow.id)
      })
    })
  }

  test('a PDF reaches either provider style: from a Chat file part and from a Responses input_file', async () => {
    const pdf = 'data:application/pdf;base64,JVBERi0xLjQK'
    const document = {
      type: 'document',
      source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' },
      title: 'report.pdf',
    }
    const chatPart = { type: 'file', file: { filename: 'report.pdf', file_data: pdf } }
    const lastContent = () =>
      (gw.upstream.requests.at(-1)!.body.messages as { content: unknown }[]).at(-1)!.content
    for (const model of ['anthropic/plain', 'openai/plain']) {
      const expected = model.startsWith('anthropic')
        ? [document, { type: 'text', text: 'Summarize.' }]
        : [chatPart, { type: 'text', text: 'Summarize.' }]
      const chat = await client.chat.completions.create({
        model,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'file', file: { filename: 'report.pdf', file_data: pdf } },
              { type: 'text', text: 'Summarize.' },
            ],
          },
        ],
      })
      expect(chat.choices[0]!.message.content).toBeString()
      // A Chat client's file goes to an OpenAI-style provider as it was sent.
      expect(lastContent()).toEqual(expected)
      const response = await client.responses.create({
        model,
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_file', filename: 'report.pdf', file_data: pdf },
              { type: 'input_text', text: 'Summarize.' },
            ],
          },
        ],
      })
      expect(response.status).toBe('completed')
      expect(lastContent()).toEqual(expected)
    }
  })

  test('models.list() lists the catalog', async () => {
    const ids: string[] = []
    for await (const model of client.models.list()) ids.push(model.id)
    expect(ids).toEqual(models.map((model) => model.id))
  })

  describe('errors arrive as the SDK’s typed classes, with the code readable', () => {
    const error = async (promise: Promise<unknown>) => {
      try {
        await promise
      } catch (caught) {
        return caught as InstanceType<typeof OpenAI.APIError>
      }
      throw new Error('expected an error')
    }
    test('401 AuthenticationError for a wrong key', async () => {
      const stranger = new OpenAI({
        baseURL: client.baseURL,
        apiKey: 'svc-live-11111111111111111111111111',
        maxRetries: 0,
      })
      const caught = await error(
        stranger.chat.completions.create({
          model: 'openai/plain',
          messages: [{ role: 'user', content: 'hi' }],
        }),
      )
      expect(caught).toBeInstanceOf(OpenAI.AuthenticationError)
      expect(caught.code).toBe('invalid_api_key')
    })
    test('400 BadRequestError naming the field', async () => {
      const caught = await error(
        client.chat.completions.create({ model: 'openai/plain', messages: [] }),
      )
      expect(caught).toBeInstanceOf(OpenAI.BadRequestError)
      expect(caught.code).toBe('invalid_request')
      expect(caught.param).toBe('messages')
    })
    test('404 NotFoundError for an unknown model', async () => {
      const caught = await error(
        client.chat.completions.create({
          model: 'plain',
          messages: [{ role: 'user', content: 'hi' }],
        }),
      )
      expect(caught).toBeInstanceOf(OpenAI.NotFoundError)
      expect(caught.code).toBe('unknown_model')
    })
    test('429 RateLimitError past the key’s requests per minute', async () => {
      const limited = new OpenAI({
        baseURL: client.baseURL,
        apiKey: (await gw.key(accountId, { rpmLimit: 1 })).key,
        maxRetries: 0,
      })
      await limited.chat.completions.create({
        model: 'openai/plain',
        messages: [{ role: 'user', content: 'hi' }],
      })
      const caught = await error(
        limited.chat.completions.create({
          model: 'openai/plain',
          messages: [{ role: 'user', content: 'hi' }],
        }),
      )
      expect(caught).toBeInstanceOf(OpenAI.RateLimitError)
      expect(caught.code).toBe('usage_limit_exceeded')
      expect(Number(caught.headers?.get('retry-after'))).toBeGreaterThan(0)
    })
    test('5xx InternalServerError when the provider fails', async () => {
      const caught = await error(
        client.chat.completions.create({
          model: 'openai/failing',
          messages: [{ role: 'user', content: 'hi' }],
        }),
      )
      expect(caught).toBeInstanceOf(OpenAI.InternalServerError)
      expect(caught.status).toBe(503)
      expect(caught.code).toBe('model_unavailable')
    })
    test('a failure after the stream began makes the stream iterator throw', async () => {
      const stream = await client.chat.completions.create({
        model: 'openai/broken',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      })
      const error = await rejection(
        (async () => {
          for await (const _chunk of stream) {
            // reading until the error event
          }
        })(),
      )
      expect(error.message).toMatch(/provider failed after the answer began/)
    })
  })
})
