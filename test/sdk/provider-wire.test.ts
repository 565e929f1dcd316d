// Answers of providers that depart from the usual wire in ways real servers do (no usage reports, a call
// without arguments as ""), read by the official SDKs. The provider here writes each SSE event on its own,
// as the real wire does.
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { startTestGateway, testModel, type TestGateway } from '../helpers/gateway.ts'
import { describeWith } from '../helpers/services.ts'

type Reply = { json?: unknown; events?: string[] }

const named = (type: string, data: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`

/** A Messages stream whose provider reports no usage at all (some Messages-compatible servers). */
const withoutUsage = [
  named('message_start', {
    message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [] },
  }),
  named('ping', {}),
  named('content_block_start', {
    index: 0,
    content_block: { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} },
  }),
  named('content_block_delta', {
    index: 0,
    delta: { type: 'input_json_delta', partial_json: '{"location":' },
  }),
  named('content_block_delta', {
    index: 0,
    delta: { type: 'input_json_delta', partial_json: '"Paris"}' },
  }),
  named('content_block_stop', { index: 0 }),
  named('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null } }),
  named('message_stop', {}),
]

/** A whole Chat Completions answer with a call whose arguments are "". */
const emptyArguments = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'm',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'ping', arguments: '' } }],
      },
      finish_reason: 'tool_calls',
    },
  ],
  usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
}

/** A whole Chat Completions answer of text. */
const text = {
  ...emptyArguments,
  choices: [{ index: 0, message: { role: 'assistant', content: 'Done.' }, finish_reason: 'stop' }],
}

const replies: Record<string, Reply> = {
  'no-usage': { events: withoutUsage },
  'empty-arguments': { json: emptyArguments },
  'takes-effort': { json: text },
  'takes-no-effort': { json: text },
}

let received = 0
/** The last body the provider received, by its model name. */
const bodies = new Map<string, Record<string, unknown>>()

function startProvider() {
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const body = (await request.json()) as { model: string }
      received += 1
      bodies.set(body.model, body)
      const reply = replies[body.model]!
      if (reply.json) return Response.json(reply.json)
      const encoder = new TextEncoder()
      const stream = new ReadableStream<Uint8Array>({
        async start(controller) {
          for (const event of reply.events!) {
            controller.enqueue(encoder.encode(event))
            await Bun.sleep(1)
          }
          controller.close()
        },
      })
      return new Response(stream, { headers: { 'content-type': 'text/event-stream' } })
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) }
}

describeWith('postgres', 'providers off the usual wire, read by the SDKs', () => {
  let gw: TestGateway
  let provider: ReturnType<typeof startProvider>
  let openai: OpenAI
  let anthropic: Anthropic
  beforeAll(async () => {
    provider = startProvider()
    gw = await startTestGateway({
      store: 'memory',
      database: 'postgres',
      models: [
        testModel('messages/no-usage', 'no-usage', {
          routes: [{ provider: 'wire-anthropic', model: 'no-usage' }],
        }),
        testModel('chat/empty-arguments', 'empty-arguments', {
          routes: [{ provider: 'wire-openai', model: 'empty-arguments' }],
        }),
        testModel('chat/takes-effort', 'takes-effort', {
          routes: [{ provider: 'wire-openai', model: 'takes-effort' }],
          capabilities: { reasoning: true },
        }),
        testModel('chat/takes-no-effort', 'takes-no-effort', {
          routes: [{ provider: 'wire-openai', model: 'takes-no-effort' }],
          capabilities: { reasoning: false },
        }),
      ],
      catalog: {
        providers: [
          {
            id: 'wire-openai',
            style: 'openai',
            baseUrl: `${provider.url}/v1`,
            apiKeyEnv: 'FAKE_PROVIDER_KEY',
          },
          {
            id: 'wire-anthropic',
            style: 'anthropic',
            baseUrl: provider.url,
            apiKeyEnv: 'FAKE_PROVIDER_KEY',
          },
        ],
      },
    })
    const { apiUrl } = gw.app.listen()
    const key = (await gw.key(await gw.account('10'))).key
    openai = new OpenAI({ baseURL: `${apiUrl}/v1`, apiKey: key, maxRetries: 0 })
    anthropic = new Anthropic({ baseURL: apiUrl, apiKey: key, maxRetries: 0 })
  })
  afterAll(async () => {
    await gw.close()
    await provider.stop()
  })

  test('Messages client, a Messages-style provider without usage: one message_delta, with its stop reason and the count', async () => {
    const stream = anthropic.messages.stream({
      model: 'messages/no-usage',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: {} } }],
    })
    let deltas = 0
    stream.on('streamEvent', (event) => {
      if (event.type === 'message_delta') deltas += 1
    })
    const message = await stream.finalMessage()
    expect(deltas).toBe(1)
    expect(message.stop_reason).toBe('tool_use')
    expect(message.content).toEqual([
      expect.objectContaining({ type: 'tool_use', id: 'toolu_1', input: { location: 'Paris' } }),
    ])
    expect(message.usage.output_tokens).toBeGreaterThan(0)
  })

  test('Responses and Messages clients, whole: a call the provider sent with arguments "" has the arguments {}', async () => {
    const response = await openai.responses.create({
      model: 'chat/empty-arguments',
      input: 'Ping',
      tools: [{ type: 'function', name: 'ping', parameters: {}, strict: false }],
    })
    const call = response.output.find((item) => item.type === 'function_call')
    expect(call?.type === 'function_call' && call.arguments).toBe('{}')
    const message = await anthropic.messages.create({
      model: 'chat/empty-arguments',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Ping' }],
      tools: [{ name: 'ping', input_schema: { type: 'object', properties: {} } }],
    })
    expect(message.content).toEqual([
      expect.objectContaining({ type: 'tool_use', id: 'call_1', input: {} }),
    ])
  })

  test('Chat Completions client asking for an answer in audio from a Messages-style provider: 400 naming modalities, nothing sent', async () => {
    const before = received
    const error = await openai.chat.completions
      .create({
        model: 'messages/no-usage',
        messages: [{ role: 'user', content: 'Say hi' }],
        modalities: ['text', 'audio'],
        audio: { voice: 'alloy', format: 'mp3' },
      })
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(OpenAI.BadRequestError)
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('modalities')
    expect(received).toBe(before)
  })

  test('a Messages client thinking, to a model that takes a reasoning effort: the budget becomes one; a model that takes none gets none', async () => {
    const thinking = { type: 'enabled', budget_tokens: 10_000 } as const
    const message = await anthropic.messages.create({
      model: 'chat/takes-effort',
      max_tokens: 16_000,
      thinking,
      messages: [{ role: 'user', content: 'Plan the trip.' }],
    })
    expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: 'Done.' })])
    expect(bodies.get('takes-effort')?.reasoning_effort).toBe('medium')

    await anthropic.messages.create({
      model: 'chat/takes-no-effort',
      max_tokens: 16_000,
      thinking,
      messages: [{ role: 'user', content: 'Plan the trip.' }],
    })
    expect(bodies.get('takes-no-effort')).not.toHaveProperty('reasoning_effort')
    const response = await openai.responses.create({
      model: 'chat/takes-no-effort',
      input: 'Plan the trip.',
      reasoning: { effort: 'high' },
    })
    expect(response.output_text).toBe('Done.')
    expect(bodies.get('takes-no-effort')).not.toHaveProperty('reasoning_effort')
  })
})
