// Conformance: recorded provider streams (test/fixtures/upstream) relayed to each client style, for every
// client style × provider style pair, checked event by event and for what the events add up to.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { nanoToUsd } from '../../../../shared/money.ts'
import {
  readChatStream,
  readMessagesStream,
  readResponsesStream,
  type Summary,
} from '../../../helpers/client-streams.ts'
import {
  anthropicTestModel,
  startTestGateway,
  testModel,
  type TestGateway,
} from '../../../helpers/gateway.ts'
import { describeWith } from '../../../helpers/services.ts'

type Finish = 'stop' | 'stop_sequence' | 'length' | 'tool_calls' | 'content_filter'
type Expected = {
  text: string
  tools: { name: string; arguments: string }[]
  finish?: Finish
  usage?: { input: number; cached: number; output: number }
  error?: boolean
  kinds: { chat: string[]; messages: string[]; responses: string[] }
}

const weather = { name: 'get_weather', arguments: '{"location": "Paris"}' }
const time = { name: 'get_time', arguments: '{"zone": "CET"}' }
const responsesText = (deltas: number, end = 'completed') => [
  'created',
  'in_progress',
  'output_item.added',
  'content_part.added',
  ...Array(deltas).fill('output_text.delta'),
  'output_text.done',
  'content_part.done',
  'output_item.done',
  end,
]
const responsesTool = (deltas: number) => [
  'output_item.added',
  ...Array(deltas).fill('function_call_arguments.delta'),
  'function_call_arguments.done',
  'output_item.done',
]

const openai: Record<string, Expected> = {
  text: {
    text: 'Hello there!',
    tools: [],
    finish: 'stop',
    usage: { input: 40, cached: 16, output: 3 },
    kinds: {
      chat: ['role', 'text', 'text', 'text', 'finish:stop', 'usage', '[DONE]'],
      messages: [
        'message_start',
        'block_start:text',
        'text_delta',
        'text_delta',
        'text_delta',
        'block_stop',
        'message_delta:end_turn',
        'message_stop',
      ],
      responses: responsesText(3),
    },
  },
  'tool-single': {
    text: '',
    tools: [weather],
    finish: 'tool_calls',
    usage: { input: 82, cached: 0, output: 17 },
    kinds: {
      chat: [
        'role',
        'tool:0',
        'args:0',
        'args:0',
        'args:0',
        'finish:tool_calls',
        'usage',
        '[DONE]',
      ],
      messages: [
        'message_start',
        'block_start:tool_use',
        'input_json_delta',
        'input_json_delta',
        'input_json_delta',
        'block_stop',
        'message_delta:tool_use',
        'message_stop',
      ],
      responses: ['created', 'in_progress', ...responsesTool(3), 'completed'],
    },
  },
  'tools-parallel': {
    text: '',
    tools: [weather, time],
    finish: 'tool_calls',
    usage: { input: 120, cached: 0, output: 40 },
    kinds: {
      chat: [
        'role',
        'tool:0',
        'args:0',
        'args:0',
        'tool:1',
        'args:1',
        'args:1',
        'finish:tool_calls',
        'usage',
        '[DONE]',
      ],
      messages: [
        'message_start',
        'block_start:tool_use',
        'input_json_delta',
        'input_json_delta',
        'block_stop',
        'block_start:tool_use',
        'input_json_delta',
        'input_json_delta',
        'block_stop',
        'message_delta:tool_use',
        'message_stop',
      ],
      responses: ['created', 'in_progress', ...responsesTool(2), ...responsesTool(2), 'completed'],
    },
  },
  length: {
    text: 'Once upon a time',
    tools: [],
    finish: 'length',
    usage: { input: 12, cached: 0, output: 4 },
    kinds: {
      chat: ['role', 'text', 'text', 'finish:length', 'usage', '[DONE]'],
      messages: [
        'message_start',
        'block_start:text',
        'text_delta',
        'text_delta',
        'block_stop',
        'message_delta:max_tokens',
        'message_stop',
      ],
      responses: responsesText(2, 'incomplete'),
    },
  },
  'content-filter': {
    text: 'I can',
    tools: [],
    finish: 'content_filter',
    usage: { input: 30, cached: 0, output: 2 },
    kinds: {
      chat: ['role', 'text', 'finish:content_filter', 'usage', '[DONE]'],
      messages: [
        'message_start',
        'block_start:text',
        'text_delta',
        'block_stop',
        'message_delta:refusal',
        'message_stop',
      ],
      responses: responsesText(1, 'incomplete'),
    },
  },
  'error-midstream': {
    text: 'Partial',
    tools: [],
    error: true,
    kinds: {
      chat: ['role', 'text', 'error'],
      messages: ['message_start', 'block_start:text', 'text_delta', 'error'],
      responses: [
        'created',
        'in_progress',
        'output_item.added',
        'content_part.added',
        'output_text.delta',
        'failed',
        'error',
      ],
    },
  },
}

const anthropic: Record<string, Expected> = {
  text: {
    text: 'Hello there!',
    tools: [],
    finish: 'stop',
    usage: { input: 48, cached: 16, output: 3 },
    kinds: {
      chat: ['role', 'text', 'text', 'text', 'finish:stop', 'usage', '[DONE]'],
      messages: [
        'message_start',
        'ping',
        'block_start:text',
        'text_delta',
        'text_delta',
        'text_delta',
        'block_stop',
        'message_delta:end_turn',
        'message_stop',
      ],
      responses: responsesText(3),
    },
  },
  'tool-single': {
    text: 'Let me check.',
    tools: [weather],
    finish: 'tool_calls',
    usage: { input: 310, cached: 0, output: 54 },
    kinds: {
      chat: ['role', 'text', 'tool:0', 'args:0', 'args:0', 'finish:tool_calls', 'usage', '[DONE]'],
      messages: [
        'message_start',
        'block_start:text',
        'text_delta',
        'block_stop',
        'block_start:tool_use',
        'input_json_delta',
        'input_json_delta',
        'input_json_delta',
        'block_stop',
        'message_delta:tool_use',
        'message_stop',
      ],
      responses: [
        'created',
        'in_progress',
        'output_item.added',
        'content_part.added',
        'output_text.delta',
        'output_text.done',
        'content_part.done',
        'output_item.done',
        ...responsesTool(2),
        'completed',
      ],
    },
  },
  'tools-parallel': {
    text: '',
    tools: [weather, time],
    finish: 'tool_calls',
    usage: { input: 330, cached: 0, output: 80 },
    kinds: {
      chat: [
        'role',
        'tool:0',
        'args:0',
        'args:0',
        'tool:1',
        'args:1',
        'args:1',
        'finish:tool_calls',
        'usage',
        '[DONE]',
      ],
      messages: [
        'message_start',
        'ping',
        'block_start:tool_use',
        'input_json_delta',
        'input_json_delta',
        'block_stop',
        'block_start:tool_use',
        'input_json_delta',
        'input_json_delta',
        'block_stop',
        'message_delta:tool_use',
        'message_stop',
      ],
      responses: ['created', 'in_progress', ...responsesTool(2), ...responsesTool(2), 'completed'],
    },
  },
  'stop-sequence': {
    text: '1, 2, 3',
    tools: [],
    finish: 'stop_sequence',
    usage: { input: 15, cached: 0, output: 6 },
    kinds: {
      chat: ['role', 'text', 'finish:stop', 'usage', '[DONE]'],
      messages: [
        'message_start',
        'block_start:text',
        'text_delta',
        'block_stop',
        'message_delta:stop_sequence',
        'message_stop',
      ],
      responses: responsesText(1),
    },
  },
  'max-tokens': {
    text: 'Once upon a time',
    tools: [],
    finish: 'length',
    usage: { input: 12, cached: 0, output: 4 },
    kinds: {
      chat: ['role', 'text', 'text', 'finish:length', 'usage', '[DONE]'],
      messages: [
        'message_start',
        'block_start:text',
        'text_delta',
        'text_delta',
        'block_stop',
        'message_delta:max_tokens',
        'message_stop',
      ],
      responses: responsesText(2, 'incomplete'),
    },
  },
  refusal: {
    text: 'I can',
    tools: [],
    finish: 'content_filter',
    usage: { input: 30, cached: 0, output: 2 },
    kinds: {
      chat: ['role', 'text', 'finish:content_filter', 'usage', '[DONE]'],
      messages: [
        'message_start',
        'block_start:text',
        'text_delta',
        'block_stop',
        'message_delta:refusal',
        'message_stop',
      ],
      responses: responsesText(1, 'incomplete'),
    },
  },
  'error-midstream': {
    text: 'Partial',
    tools: [],
    error: true,
    kinds: {
      chat: ['role', 'text', 'error'],
      messages: ['message_start', 'block_start:text', 'text_delta', 'error'],
      responses: [
        'created',
        'in_progress',
        'output_item.added',
        'content_part.added',
        'output_text.delta',
        'failed',
        'error',
      ],
    },
  },
}

/** How each style names a finish reason (WIRE §5). */
const finishIn = {
  chat: {
    stop: 'stop',
    stop_sequence: 'stop',
    length: 'length',
    tool_calls: 'tool_calls',
    content_filter: 'content_filter',
  },
  messages: {
    stop: 'end_turn',
    stop_sequence: 'stop_sequence',
    length: 'max_tokens',
    tool_calls: 'tool_use',
    content_filter: 'refusal',
  },
  responses: {
    stop: 'completed',
    stop_sequence: 'completed',
    length: 'incomplete:max_output_tokens',
    tool_calls: 'completed',
    content_filter: 'incomplete:content_filter',
  },
} as const

const tools = {
  chat: [
    {
      type: 'function',
      function: { name: 'get_weather', parameters: { type: 'object', properties: {} } },
    },
  ],
  messages: [{ name: 'get_weather', input_schema: { type: 'object', properties: {} } }],
  responses: [
    { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} } },
  ],
}

const requests = {
  chat: (model: string) =>
    [
      'chat/completions',
      {
        model,
        messages: [{ role: 'user', content: 'hi' }],
        tools: tools.chat,
        stream: true,
        stream_options: { include_usage: true },
      },
    ] as const,
  messages: (model: string) =>
    [
      'messages',
      {
        model,
        max_tokens: 500,
        messages: [{ role: 'user', content: 'hi' }],
        tools: tools.messages,
        stream: true,
      },
    ] as const,
  responses: (model: string) =>
    [
      'responses',
      { model, input: 'hi', tools: tools.responses, stream: true, store: false },
    ] as const,
}
const readers = {
  chat: readChatStream,
  messages: readMessagesStream,
  responses: readResponsesStream,
}

const models = [
  // A keep-alive comment before the first chunk, then three words.
  testModel('openai/keepalive-first', 'fake?tokens=3&writes=event'),
  ...Object.keys(openai).map((name) => testModel(`openai/${name}`, `fake?replay=openai/${name}`)),
  ...Object.keys(anthropic).map((name) =>
    anthropicTestModel(`anthropic/${name}`, `fake?replay=anthropic/${name}`),
  ),
]

describeWith('postgres', 'stream conformance', () => {
  let gw: TestGateway
  let key: string
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres', models })
    key = (await gw.key(await gw.account('10'))).key
  })
  afterAll(() => gw.close())

  test('a Messages stream begins with message_start, whatever the provider sent before its first chunk', async () => {
    const [path, body] = requests.messages('openai/keepalive-first')
    const response = await gw.app.api.handle(
      new Request(`http://gateway.test/v1/${path}`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
    )
    const raw = await response.text()
    expect(raw).toStartWith('event: message_start\n')
    expect(readMessagesStream(raw).kinds.at(-1)).toBe('message_stop')
  })

  for (const [provider, fixtures] of [
    ['openai', openai],
    ['anthropic', anthropic],
  ] as const) {
    for (const style of ['chat', 'messages', 'responses'] as const) {
      describe(`${provider} provider → ${style} client`, () => {
        for (const [name, expected] of Object.entries(fixtures)) {
          test(name, async () => {
            const [path, body] = requests[style](`${provider}/${name}`)
            const response = await gw.app.api.handle(
              new Request(`http://gateway.test/v1/${path}`, {
                method: 'POST',
                headers: {
                  authorization: `Bearer ${key}`,
                  'content-type': 'application/json',
                  'anthropic-version': '2023-06-01',
                },
                body: JSON.stringify(body),
              }),
            )
            expect(response.status).toBe(200)
            expect(response.headers.get('content-type')).toStartWith('text/event-stream')
            const raw = await response.text()
            const summary: Summary = readers[style](raw)
            expect(summary.kinds).toEqual(expected.kinds[style])
            if (style === 'chat') {
              // Usage was asked for: every chunk before the usage chunk says `usage: null`.
              const chunks = raw
                .split('\n')
                .filter((line) => line.startsWith('data: {'))
                .map(
                  (line) => JSON.parse(line.slice(6)) as { choices?: unknown[]; usage?: unknown },
                )
              for (const chunk of chunks.filter((each) => (each.choices?.length ?? 0) > 0))
                expect(chunk).toHaveProperty('usage', null)
            }
            expect(summary.text).toBe(expected.text)
            expect(
              summary.tools.map(({ name, arguments: args }) => ({ name, arguments: args })),
            ).toEqual(expected.tools)
            expect(summary.tools.every((tool) => tool.id.length > 0)).toBe(true)
            if (expected.error) {
              expect(summary.error).toBe('upstream_error')
              return
            }
            expect(summary.error).toBeNull()
            expect(summary.finish).toBe(finishIn[style][expected.finish!])
            expect(summary.usage).toEqual(expected.usage!)
            // Test models cost 1,000 nano per input token and 2,000 per output token.
            expect(summary.cost).toBe(
              Number(nanoToUsd(expected.usage!.input * 1_000 + expected.usage!.output * 2_000)),
            )
          })
        }
      })
    }
  }
})
