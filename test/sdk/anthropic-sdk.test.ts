// The official `@anthropic-ai/sdk` package (current major) driving the gateway's Messages style, over
// providers of both styles.
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
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
  testModel('openai/parallel', 'fake?tools=2&argsChunks=4'),
  testModel('openai/failing', 'fake?status=500'),
  testModel('openai/refusal', 'fake?tokens=3&refusal=1'),
  anthropicTestModel('anthropic/plain', 'fake?tokens=6&cached=2&cacheWrite=1'),
  anthropicTestModel('anthropic/parallel', 'fake?tools=2&argsChunks=4'),
  anthropicTestModel('anthropic/broken', 'fake?tokens=10&errorAfter=2'),
  anthropicTestModel('anthropic/overloaded', 'fake?status=529'),
]
const weather: Anthropic.Tool = {
  name: 'get_weather',
  description: 'Weather at a place',
  input_schema: {
    type: 'object',
    properties: { location: { type: 'string' } },
    required: ['location'],
  },
}

describeWith('postgres', 'anthropic SDK', () => {
  let gw: TestGateway
  let client: Anthropic
  let apiUrl: string
  let key: string
  let accountId: string
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres', models })
    apiUrl = gw.app.listen().apiUrl
    accountId = await gw.account('10')
    key = (await gw.key(accountId)).key
    client = new Anthropic({ baseURL: apiUrl, apiKey: key, maxRetries: 0 })
  })
  afterAll(() => gw.close())

  for (const provider of ['anthropic', 'openai']) {
    describe(`messages over a provider of ${provider} style`, () => {
      test('non-streaming: text, stop reason, usage with cost, and the service headers', async () => {
        const { data, response } = await client.messages
          .create({
            model: `${provider}/plain`,
            max_tokens: 100,
            system: 'Be brief.',
            messages: [{ role: 'user', content: 'Hello' }],
            stop_sequences: ['###'],
          })
          .withResponse()
        expect(data.content).toEqual([
          { type: 'text', text: 'w0 w1 w2 w3 w4 w5 ' } as Anthropic.ContentBlock,
        ])
        expect(data.stop_reason).toBe('end_turn')
        expect(data.usage.output_tokens).toBe(6)
        expect(data.usage.cache_read_input_tokens).toBe(2)
        const cost = (data.usage as unknown as { cost: number }).cost
        expect(response.headers.get('x-service-cost-usd')).toBe(String(cost))
        expect(response.headers.get('request-id')).toMatch(/^req_/)
        expect(response.headers.get('x-service-provider')).toBe(
          provider === 'anthropic' ? 'fake-anthropic' : 'fake',
        )
      })

      test('streaming with the stream helper: text events, the final message, the cost on message_delta', async () => {
        const stream = client.messages.stream({
          model: `${provider}/plain`,
          max_tokens: 100,
          messages: [{ role: 'user', content: 'Hello' }],
        })
        let text = ''
        let cost: unknown
        stream.on('text', (delta) => (text += delta))
        // The helper copies only the token counts it knows into the final message; the cost is on the event.
        stream.on('streamEvent', (event) => {
          if (event.type === 'message_delta')
            cost = (event.usage as unknown as { cost: number }).cost
        })
        const final = await stream.finalMessage()
        expect(text).toBe('w0 w1 w2 w3 w4 w5 ')
        expect(final.stop_reason).toBe('end_turn')
        expect(final.usage.output_tokens).toBe(6)
        expect(final.usage.cache_read_input_tokens).toBe(2)
        expect(cost).toBeGreaterThan(0)
      })

      test('a tool round trip, streamed, with parallel tool_use blocks', async () => {
        const messages: Anthropic.MessageParam[] = [
          { role: 'user', content: 'Weather in Paris and Tokyo?' },
        ]
        const first = await client.messages
          .stream({ model: `${provider}/parallel`, max_tokens: 300, messages, tools: [weather] })
          .finalMessage()
        expect(first.stop_reason).toBe('tool_use')
        const uses = first.content.filter(
          (block): block is Anthropic.ToolUseBlock => block.type === 'tool_use',
        )
        expect(uses.map((use) => (use.input as { location: string }).location)).toEqual([
          'Paris',
          'Tokyo',
        ])
        messages.push({ role: 'assistant', content: first.content })
        messages.push({
          role: 'user',
          content: uses.map((use) => ({
            type: 'tool_result' as const,
            tool_use_id: use.id,
            content: '21 °C',
          })),
        })
        const second = await client.messages.create({
          model: `${provider}/parallel`,
          max_tokens: 300,
          messages,
          tools: [weather],
        })
        expect(second.stop_reason).toBe('end_turn')
        const sent = JSON.stringify(gw.upstream.requests.at(-1)!.body)
        for (const use of uses) expect(sent).toContain(use.id)
      })
    })
  }

  test('a refusal of an OpenAI-style provider stops as refusal, its words the text, streamed or not', async () => {
    const params = {
      model: 'openai/refusal',
      max_tokens: 100,
      messages: [{ role: 'user' as const, content: 'Something it declines' }],
    }
    const answer = await client.messages.create(params)
    expect(answer.stop_reason).toBe('refusal')
    expect(answer.content).toEqual([{ type: 'text', text: 'w0 w1 w2 ' }] as never)
    const streamed = await client.messages.stream(params).finalMessage()
    expect(streamed.stop_reason).toBe('refusal')
    expect(streamed.content).toEqual(answer.content as never)
  })

  test('documents reach an OpenAI-style provider: plain text as text, a PDF as a file; one by URL is refused, nothing sent', async () => {
    const ask = (document: Anthropic.DocumentBlockParam) =>
      client.messages.create({
        model: 'openai/plain',
        max_tokens: 100,
        messages: [
          {
            role: 'user',
            content: [document, { type: 'text', text: 'What colour is the grass?' }],
          },
        ],
      })
    const answer = await ask({
      type: 'document',
      title: 'Notes',
      source: { type: 'text', media_type: 'text/plain', data: 'The grass is green.' },
    })
    expect(answer.content[0]!.type).toBe('text')
    expect(gw.upstream.requests.at(-1)!.body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Notes\n\nThe grass is green.' },
          { type: 'text', text: 'What colour is the grass?' },
        ],
      },
    ])
    await ask({
      type: 'document',
      title: 'grass.pdf',
      source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' },
    })
    expect(gw.upstream.requests.at(-1)!.body.messages).toEqual([
      {
        role: 'user',
        content: [
          {
            type: 'file',
            file: { filename: 'grass.pdf', file_data: 'data:application/pdf;base64,JVBERi0xLjQK' },
          },
          { type: 'text', text: 'What colour is the grass?' },
        ],
      },
    ])
    const sent = gw.upstream.requests.length
    const byUrl = await rejection(
      ask({ type: 'document', source: { type: 'url', url: 'https://example.com/grass.pdf' } }),
    )
    expect(byUrl).toBeInstanceOf(Anthropic.BadRequestError)
    expect((byUrl as Error).message).toContain('only plain-text and PDF documents given inline')
    expect(gw.upstream.requests.length).toBe(sent)
  })

  test('the key is accepted as x-api-key with any anthropic-version, as older SDK majors send it', async () => {
    const response = await fetch(`${apiUrl}/v1/messages`, {
      method: 'POST',
      headers: {
        'x-api-key': key,
        'anthropic-version': '2023-06-01',
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        model: 'anthropic/plain',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    })
    expect(response.status).toBe(200)
    // The client's key never goes upstream; the provider's does, as x-api-key.
    const headers = gw.upstream.requests.at(-1)!.headers
    expect(headers['x-api-key']).toBe('sk-fake-provider')
    expect(JSON.stringify(headers)).not.toContain(key)
  })

  test('beta features: the client’s anthropic-beta reaches a provider of the Messages style as sent, never the key', async () => {
    const betas = ['context-1m-2025-08-07', 'interleaved-thinking-2025-05-14']
    const message = await client.beta.messages.create({
      model: 'anthropic/plain',
      max_tokens: 10,
      betas,
      messages: [{ role: 'user', content: 'hi' }],
    })
    expect(message.content).toEqual([{ type: 'text', text: 'w0 w1 w2 w3 w4 w5 ' }] as never)
    const headers = gw.upstream.requests.at(-1)!.headers
    expect(headers['anthropic-beta']).toBe(betas.join(','))
    expect(headers['anthropic-version']).toBe('2023-06-01')
    expect(headers['x-api-key']).toBe('sk-fake-provider')
    expect(JSON.stringify(headers)).not.toContain(key)
    // A provider of another style has no use for it.
    await client.beta.messages.create({
      model: 'openai/plain',
      max_tokens: 10,
      betas,
      messages: [{ role: 'user', content: 'hi' }],
    })
    expect(gw.upstream.requests.at(-1)!.headers['anthropic-beta']).toBeUndefined()
  })

  test('models.list() lists the catalog', async () => {
    const ids: string[] = []
    for await (const model of client.models.list()) ids.push(model.id)
    expect(ids).toEqual(models.map((model) => model.id))
  })

  describe('errors arrive as the SDK’s typed classes, in the Messages error shape with the code', () => {
    const error = async (promise: Promise<unknown>) => {
      try {
        await promise
      } catch (caught) {
        return caught as InstanceType<typeof Anthropic.APIError> & {
          error: { type: string; error: { type: string; code: string } }
        }
      }
      throw new Error('expected an error')
    }
    const hello: Anthropic.MessageParam[] = [{ role: 'user', content: 'hi' }]
    test('401 AuthenticationError for a wrong key', async () => {
      const stranger = new Anthropic({
        baseURL: apiUrl,
        apiKey: 'svc-live-11111111111111111111111111',
        maxRetries: 0,
      })
      const caught = await error(
        stranger.messages.create({ model: 'anthropic/plain', max_tokens: 10, messages: hello }),
      )
      expect(caught).toBeInstanceOf(Anthropic.AuthenticationError)
      expect(caught.error.error).toMatchObject({
        type: 'authentication_error',
        code: 'invalid_api_key',
      })
    })
    test('400 BadRequestError for an extra input', async () => {
      const caught = await error(
        client.messages.create({
          model: 'anthropic/plain',
          max_tokens: 10,
          messages: hello,
          response_format: { type: 'json' },
        } as never),
      )
      expect(caught).toBeInstanceOf(Anthropic.BadRequestError)
      expect(caught.error.error).toMatchObject({
        type: 'invalid_request_error',
        code: 'invalid_request',
      })
      expect(caught.message).toContain('response_format: Extra inputs are not permitted')
    })
    test('400 BadRequestError for more stop_sequences than an OpenAI-style provider takes, nothing sent', async () => {
      const sent = gw.upstream.requests.length
      const caught = await error(
        client.messages.create({
          model: 'openai/plain',
          max_tokens: 10,
          messages: hello,
          stop_sequences: ['a', 'b', 'c', 'd', 'e'],
        }),
      )
      expect(caught).toBeInstanceOf(Anthropic.BadRequestError)
      expect(caught.error.error).toMatchObject({
        type: 'invalid_request_error',
        code: 'invalid_request',
      })
      expect(caught.message).toContain("stop_sequences: at most 4 with this model's provider")
      expect(gw.upstream.requests.length).toBe(sent)
      // Four go through as they are; a provider of the Messages style takes five.
      await client.messages.create({
        model: 'openai/plain',
        max_tokens: 10,
        messages: hello,
        stop_sequences: ['a', 'b', 'c', 'd'],
      })
      expect(gw.upstream.requests.at(-1)!.body.stop).toEqual(['a', 'b', 'c', 'd'])
      await client.messages.create({
        model: 'anthropic/plain',
        max_tokens: 10,
        messages: hello,
        stop_sequences: ['a', 'b', 'c', 'd', 'e'],
      })
      expect(gw.upstream.requests.at(-1)!.body.stop_sequences).toHaveLength(5)
    })
    test('404 NotFoundError for an unknown model', async () => {
      const caught = await error(
        client.messages.create({ model: 'claude-plain', max_tokens: 10, messages: hello }),
      )
      expect(caught).toBeInstanceOf(Anthropic.NotFoundError)
      expect(caught.error.error).toMatchObject({ type: 'not_found_error', code: 'unknown_model' })
    })
    test('429 RateLimitError past the key’s requests per minute', async () => {
      const limited = new Anthropic({
        baseURL: apiUrl,
        apiKey: (await gw.key(accountId, { rpmLimit: 1 })).key,
        maxRetries: 0,
      })
      await limited.messages.create({ model: 'anthropic/plain', max_tokens: 10, messages: hello })
      const caught = await error(
        limited.messages.create({ model: 'anthropic/plain', max_tokens: 10, messages: hello }),
      )
      expect(caught).toBeInstanceOf(Anthropic.RateLimitError)
      expect(caught.error.error).toMatchObject({
        type: 'rate_limit_error',
        code: 'usage_limit_exceeded',
      })
    })
    test('5xx InternalServerError when the provider fails or is overloaded', async () => {
      for (const model of ['openai/failing', 'anthropic/overloaded']) {
        const caught = await error(
          client.messages.create({ model, max_tokens: 10, messages: hello }),
        )
        expect(caught).toBeInstanceOf(Anthropic.InternalServerError)
        expect(caught.error.error).toMatchObject({
          type: 'overloaded_error',
          code: 'model_unavailable',
        })
      }
    })
    test('a failure after the stream began makes the stream throw', async () => {
      const stream = client.messages.stream({
        model: 'anthropic/broken',
        max_tokens: 100,
        messages: hello,
      })
      expect((await rejection(stream.finalMessage())).message).toMatch(
        /provider failed after the answer began/,
      )
    })
  })
})
