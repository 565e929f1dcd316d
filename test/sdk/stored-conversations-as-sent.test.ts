// A kept conversation goes back to the provider as it was written: a message thread's continue and a
// Responses follow-up send the earlier tool calls with their input's keys in the model's order (the fake
// provider writes `{"location", "unit"}`), so the provider gets the same prompt it got before, which its
// prompt cache matches; a continue that sends the thread's tools again is taken, the kept ones comparing
// as written; and a stored response is retrieved as the client received it.
import Anthropic from '@anthropic-ai/sdk'
import { betaTool } from '@anthropic-ai/sdk/helpers/beta/json-schema'
import { afterAll, beforeAll, expect, test } from 'bun:test'
import OpenAI from 'openai'
import {
  anthropicTestModel,
  startTestGateway,
  testModel,
  type TestGateway,
} from '../helpers/gateway.ts'
import { describeWith } from '../helpers/services.ts'
import { storeSetups } from '../helpers/setups.ts'

const models = [
  testModel('openai/tools', 'fake?tools=1'),
  anthropicTestModel('anthropic/tools', 'fake?tools=1'),
]
const INPUT = '{"location":"Paris","unit":"c"}'

type Block = { type: string; input?: unknown }
type SentMessage = {
  role: string
  content: string | Block[] | null
  tool_calls?: { function: { arguments: string } }[]
}

/** The earlier tool call of a provider request as its provider style carries it, as JSON text. */
const keptCall = (body: Record<string, unknown>) => {
  const messages = body.messages as SentMessage[]
  const assistant = messages.find((message) => message.role === 'assistant')!
  if (assistant.tool_calls) return assistant.tool_calls[0]!.function.arguments
  const use = (assistant.content as Block[]).find((block) => block.type === 'tool_use')!
  return JSON.stringify(use.input)
}

function keptAsSent(stores: { store: 'memory' | 'redis'; database: 'postgres' | 'embedded' }) {
  let gw: TestGateway
  let apiUrl: string
  let key: string
  beforeAll(async () => {
    gw = await startTestGateway({ ...stores, models })
    apiUrl = gw.app.listen({ apiOnly: true }).apiUrl
    key = (await gw.key(await gw.account('10'))).key
  })
  afterAll(() => gw?.close())

  for (const provider of ['anthropic', 'openai'] as const)
    test(`a thread's continue sends the kept tool call as written, over a provider of ${provider} style`, async () => {
      const sentBefore = gw.upstream.requests.length
      const statuses: number[] = []
      const client = new Anthropic({
        baseURL: apiUrl,
        apiKey: key,
        maxRetries: 0,
        fetch: async (url, init) => {
          const response = await fetch(url, init)
          statuses.push(response.status)
          return response
        },
      })
      const runner = client.beta.messages.toolRunner({
        model: `${provider}/tools`,
        max_tokens: 200,
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools: [
          betaTool({
            name: 'get_weather',
            description: 'The weather in a city',
            inputSchema: {
              type: 'object',
              properties: { location: { type: 'string' }, unit: { type: 'string' } },
            },
            run: () => 'sunny',
          }),
        ],
      })
      await runner.runUntilDone()
      // The second turn was a continue served from the kept thread, not a replay.
      expect(statuses).toEqual([200, 200])
      const sent = gw.upstream.requests.slice(sentBefore)
      expect(sent).toHaveLength(2)
      expect(keptCall(sent[1]!.body)).toBe(INPUT)
    })

  test('a continue that sends the same tools again is taken: the kept tools compare as written', async () => {
    const tools = [
      {
        name: 'get_weather',
        description: 'The weather in a city',
        input_schema: {
          type: 'object',
          properties: { location: { type: 'string' } },
          required: ['location'],
        },
      },
    ]
    const post = (body: Record<string, unknown>) =>
      fetch(`${apiUrl}/v1/messages`, {
        method: 'POST',
        headers: {
          'x-api-key': key,
          'content-type': 'application/json',
          'anthropic-version': '2023-06-01',
          'anthropic-beta': 'message-threads-2026-08-12',
        },
        body: JSON.stringify({ model: 'anthropic/tools', max_tokens: 100, tools, ...body }),
      })
    const created = await post({
      thread: { type: 'create' },
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
    })
    expect(created.status).toBe(200)
    const reply = (await created.json()) as { id: string; content: { type: string; id?: string }[] }
    const use = reply.content.find((block) => block.type === 'tool_use')!
    const continued = await post({
      thread: { type: 'continue', previous_message_id: reply.id },
      messages: [
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny' }] },
      ],
    })
    expect(continued.status).toBe(200)
  })

  test('a Responses follow-up sends the kept tool call as written, and the stored response reads back as received', async () => {
    const client = new OpenAI({ baseURL: `${apiUrl}/v1`, apiKey: key, maxRetries: 0 })
    const tools = [
      {
        type: 'function' as const,
        name: 'get_weather',
        parameters: { type: 'object', properties: { location: { type: 'string' } } },
        strict: false,
      },
    ]
    const sentBefore = gw.upstream.requests.length
    const first = await client.responses.create({
      model: 'anthropic/tools',
      input: 'Weather in Paris?',
      tools,
    })
    const call = first.output.find((item) => item.type === 'function_call')!
    expect(call.arguments).toBe(INPUT)
    await client.responses.create({
      model: 'anthropic/tools',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny' }],
      tools,
    })
    const sent = gw.upstream.requests.slice(sentBefore)
    expect(sent).toHaveLength(2)
    expect(keptCall(sent[1]!.body)).toBe(INPUT)
    const stored = await fetch(`${apiUrl}/v1/responses/${first.id}`, {
      headers: { authorization: `Bearer ${key}` },
    })
    const received = JSON.parse(JSON.stringify(first)) as Record<string, unknown>
    delete received.output_text
    expect(JSON.stringify(await stored.json())).toBe(JSON.stringify(received))
  })
}

for (const setup of storeSetups)
  describeWith(
    [...setup.needs],
    `stored conversations as sent (${setup.store} admission, ${setup.database} database)`,
    () => keptAsSent(setup),
  )
