// Chunk-split conformance: recorded provider streams, with keep-alive comments and (for some) CRLF line
// endings, reach the gateway cut into single-byte writes, random-size writes and one write; every client
// style reads them with the official SDKs' own stream helpers, in both majors of each SDK. Whatever the
// cut, the client sees the same events, the same final answer and the same error.
import Anthropic from '@anthropic-ai/sdk'
import AnthropicV0 from 'anthropic-sdk-v0'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import OpenAIV6 from 'openai-v6'
import {
  anthropicTestModel,
  startTestGateway,
  testModel,
  type TestGateway,
} from '../helpers/gateway.ts'
import { describeWith } from '../helpers/services.ts'

type Provider = 'openai' | 'anthropic'
type Case = {
  name: string
  recording: string
  crlf: boolean
  text: string
  tools: number
  error: boolean
}

/** The recorded streams of each provider style (test/fixtures/upstream) and what they add up to. */
const cases: Record<Provider, Case[]> = {
  openai: [
    {
      name: 'text with usage',
      recording: 'text',
      crlf: true,
      text: 'Hello there!',
      tools: 0,
      error: false,
    },
    {
      name: 'parallel tool calls, arguments streamed',
      recording: 'tools-parallel',
      crlf: false,
      text: '',
      tools: 2,
      error: false,
    },
    {
      name: 'content filter',
      recording: 'content-filter',
      crlf: false,
      text: 'I can',
      tools: 0,
      error: false,
    },
    {
      name: 'output limit',
      recording: 'length',
      crlf: true,
      text: 'Once upon a time',
      tools: 0,
      error: false,
    },
    {
      name: 'provider error mid-stream',
      recording: 'error-midstream',
      crlf: true,
      text: 'Partial',
      tools: 0,
      error: true,
    },
  ],
  anthropic: [
    {
      name: 'text with usage',
      recording: 'text',
      crlf: true,
      text: 'Hello there!',
      tools: 0,
      error: false,
    },
    {
      name: 'text then a tool call, arguments streamed',
      recording: 'tool-single',
      crlf: false,
      text: 'Let me check.',
      tools: 1,
      error: false,
    },
    { name: 'refusal', recording: 'refusal', crlf: false, text: 'I can', tools: 0, error: false },
    {
      name: 'stop sequence',
      recording: 'stop-sequence',
      crlf: true,
      text: '1, 2, 3',
      tools: 0,
      error: false,
    },
    {
      name: 'provider error mid-stream',
      recording: 'error-midstream',
      crlf: true,
      text: 'Partial',
      tools: 0,
      error: true,
    },
  ],
}
const WRITES = ['bytes', 'random', 'one'] as const
const LONG_STREAM_EVENTS = 1_000

const modelId = (provider: Provider, recording: string, writes: string) =>
  `${provider}/${recording}-${writes}`
const modelOf = (provider: Provider, id: string, upstream: string) =>
  provider === 'openai' ? testModel(id, upstream) : anthropicTestModel(id, upstream)
const models = (['openai', 'anthropic'] as const).flatMap((provider) => [
  ...cases[provider].flatMap(({ recording, crlf }) =>
    WRITES.map((writes) =>
      modelOf(
        provider,
        modelId(provider, recording, writes),
        `fake?replay=${provider}/${recording}&keepalive=1&writes=${writes}&seed=7${crlf ? '&crlf=1' : ''}`,
      ),
    ),
  ),
  // One write per event, a turn of the event loop between them, keep-alive comments among them.
  modelOf(provider, `${provider}/long`, `fake?tokens=${LONG_STREAM_EVENTS}&gap=0`),
])

/** What a client read: the events its SDK yielded, the SDK's final answer, and the error it raised. */
type Reading = { events: unknown[]; final: unknown; error: string | null }

/**
 * Request-dependent values (IDs made from the request ID, timestamps) become stable placeholders, in
 * order of first appearance, so two readings of the same answer compare equal.
 */
function normalize(reading: Reading): Reading {
  const ids = new Map<string, string>()
  const walk = (value: unknown, key?: string): unknown => {
    if (Array.isArray(value)) return value.map((item) => walk(item))
    if (value && typeof value === 'object')
      return Object.fromEntries(
        Object.entries(value).map(([name, inner]) => [name, walk(inner, name)]),
      )
    if ((key === 'created' || key === 'created_at') && typeof value === 'number') return 0
    if ((key === 'id' || key === 'item_id') && typeof value === 'string') {
      if (!ids.has(value)) ids.set(value, `id${ids.size}`)
      return ids.get(value)
    }
    return value
  }
  return walk(reading) as Reading
}

async function reading(collect: (events: unknown[]) => Promise<unknown>): Promise<Reading> {
  const events: unknown[] = []
  try {
    const final = await collect(events)
    return normalize({ events, final, error: null })
  } catch (error) {
    const { name, message } = error as Error
    return normalize({ events, final: null, error: `${name}: ${message}` })
  }
}

type OpenAIClient = OpenAI | OpenAIV6
type AnthropicClient = Anthropic | AnthropicV0

const readers = {
  chat: (client: OpenAIClient, model: string) =>
    reading(async (events) => {
      const stream = (client as OpenAI).chat.completions.stream({
        model,
        messages: [{ role: 'user', content: 'hi' }],
        stream_options: { include_usage: true },
      })
      for await (const chunk of stream) events.push(chunk)
      return stream.finalChatCompletion()
    }),
  responses: (client: OpenAIClient, model: string) =>
    reading(async (events) => {
      const stream = (client as OpenAI).responses.stream({ model, input: 'hi', store: false })
      for await (const event of stream) events.push(event)
      return stream.finalResponse()
    }),
  messages: (client: AnthropicClient, model: string) =>
    reading(async (events) => {
      const stream = (client as Anthropic).messages.stream({
        model,
        max_tokens: 4_000,
        messages: [{ role: 'user', content: 'hi' }],
      })
      for await (const event of stream) events.push(event)
      return stream.finalMessage()
    }),
}

/** The answer's text and tool calls, as the SDK's final object holds them. */
function answerOf(style: keyof typeof readers, final: unknown): { text: string; tools: number } {
  if (style === 'chat') {
    const message = (final as OpenAI.ChatCompletion).choices[0]!.message
    return { text: message.content ?? '', tools: message.tool_calls?.length ?? 0 }
  }
  if (style === 'responses') {
    const output = (final as OpenAI.Responses.Response).output
    const text = output
      .flatMap((item) =>
        item.type === 'message'
          ? item.content.map((part) => (part.type === 'output_text' ? part.text : ''))
          : [],
      )
      .join('')
    return { text, tools: output.filter((item) => item.type === 'function_call').length }
  }
  const content = (final as Anthropic.Message).content
  return {
    text: content.map((block) => (block.type === 'text' ? block.text : '')).join(''),
    tools: content.filter((block) => block.type === 'tool_use').length,
  }
}

describeWith('postgres', 'chunk-split conformance with the official SDKs', () => {
  let gw: TestGateway
  let clients: { openai: Record<string, OpenAIClient>; anthropic: Record<string, AnthropicClient> }
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres', models })
    const { apiUrl } = gw.app.listen()
    const key = (await gw.key(await gw.account('100'))).key
    const options = { apiKey: key, maxRetries: 0 }
    clients = {
      openai: {
        'openai 7': new OpenAI({ ...options, baseURL: `${apiUrl}/v1` }),
        'openai 6': new OpenAIV6({ ...options, baseURL: `${apiUrl}/v1` }),
      },
      anthropic: {
        '@anthropic-ai/sdk 1': new Anthropic({ ...options, baseURL: apiUrl }),
        '@anthropic-ai/sdk 0': new AnthropicV0({ ...options, baseURL: apiUrl }),
      },
    }
  })
  afterAll(() => gw.close())

  for (const provider of ['openai', 'anthropic'] as const) {
    for (const style of ['chat', 'responses', 'messages'] as const) {
      const sdk = style === 'messages' ? 'anthropic' : 'openai'
      describe(`${provider} provider → ${style} client`, () => {
        for (const testCase of cases[provider]) {
          test(`${testCase.name}: the same events, answer and error in single-byte, random and one-write cuts, in both SDK majors`, async () => {
            const byMajor: Reading[] = []
            for (const client of Object.values(clients[sdk])) {
              const read = readers[style] as (client: unknown, model: string) => Promise<Reading>
              const [bytes, random, one] = await Promise.all(
                WRITES.map((writes) => read(client, modelId(provider, testCase.recording, writes))),
              )
              expect(bytes!).toEqual(one!)
              expect(random!).toEqual(one!)
              expect(one!.events.length).toBeGreaterThan(1)
              if (testCase.error) {
                expect(one!.error).toMatch(/upstream_error|failed after the answer began/)
              } else {
                expect(one!.error).toBeNull()
                expect(answerOf(style, one!.final)).toEqual({
                  text: testCase.text,
                  tools: testCase.tools,
                })
              }
              byMajor.push(one!)
            }
            // Both majors of the SDK see the same stream (one of the Responses helpers also yields the
            // error event it then raises).
            const upToError = (events: unknown[]) =>
              events.filter((event) => (event as { type?: string }).type !== 'error')
            expect(upToError(byMajor[1]!.events)).toEqual(upToError(byMajor[0]!.events))
          })
        }

        test(`a ${LONG_STREAM_EVENTS}-event stream arrives whole: no delta lost, repeated or out of order`, async () => {
          const read = readers[style] as (client: unknown, model: string) => Promise<Reading>
          const { final, error } = await read(Object.values(clients[sdk])[0], `${provider}/long`)
          expect(error).toBeNull()
          const expected = Array.from(
            { length: LONG_STREAM_EVENTS },
            (_, index) => `w${index} `,
          ).join('')
          expect(answerOf(style, final).text).toBe(expected)
        })
      })
    }
  }
})
