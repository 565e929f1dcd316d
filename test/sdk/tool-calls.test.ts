// Tool calls as the official SDKs receive them across provider styles: calls without arguments and
// tool-call IDs another style would refuse.
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import type { RunnableToolFunctionWithParse } from 'openai/lib/RunnableFunction'
import {
  anthropicTestModel,
  startTestGateway,
  testModel,
  type TestGateway,
} from '../helpers/gateway.ts'
import { describeWith } from '../helpers/services.ts'

const models = [
  testModel('openai/tools', 'fake?tools=1'),
  testModel('openai/noargs', 'fake?tools=1&noargs=1'),
  anthropicTestModel('anthropic/tools', 'fake?tools=1'),
  anthropicTestModel('anthropic/noargs', 'fake?tools=1&noargs=1'),
]
const ping = {
  type: 'function' as const,
  function: { name: 'ping', parameters: { type: 'object', properties: {} } },
}

type Block = { type: string; id?: string; tool_use_id?: string }
type Sent = { messages: { role: string; content: Block[] }[] }

describeWith('postgres', 'tool calls through the SDKs', () => {
  let gw: TestGateway
  let openai: OpenAI
  let anthropic: Anthropic
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres', models })
    const { apiUrl } = gw.app.listen()
    const key = (await gw.key(await gw.account('10'))).key
    openai = new OpenAI({ baseURL: `${apiUrl}/v1`, apiKey: key, maxRetries: 0 })
    anthropic = new Anthropic({ baseURL: apiUrl, apiKey: key, maxRetries: 0 })
  })
  afterAll(() => gw.close())
  const lastSent = () => gw.upstream.requests.at(-1)!.body as unknown as Sent

  describe('a tool call without arguments has the arguments {}', () => {
    const ask = { messages: [{ role: 'user' as const, content: 'Ping' }], tools: [ping] }

    test('chat completions over a Messages-style provider, whole and streamed', async () => {
      const whole = await openai.chat.completions.create({ model: 'anthropic/noargs', ...ask })
      const streamed = await openai.chat.completions
        .stream({ model: 'anthropic/noargs', ...ask })
        .finalChatCompletion()
      for (const completion of [whole, streamed]) {
        const call = completion.choices[0]!.message.tool_calls![0]!
        expect(call.type === 'function' && call.function.arguments).toBe('{}')
      }
    })

    test('the SDK’s tool runner calls the tool and finishes, streamed or not', async () => {
      const received: unknown[] = []
      const tool: RunnableToolFunctionWithParse<object> = {
        type: 'function',
        function: {
          name: 'ping',
          description: 'Answers pong',
          parameters: { type: 'object', properties: {} },
          parse: JSON.parse,
          function: (args) => {
            received.push(args)
            return 'pong'
          },
        },
      }
      const params = {
        model: 'anthropic/noargs',
        messages: [{ role: 'user' as const, content: 'Ping' }],
        tools: [tool],
      }
      const whole = openai.chat.completions.runTools(params)
      expect(await whole.finalContent()).toContain('w0')
      const streamed = openai.chat.completions.runTools({ ...params, stream: true })
      expect(await streamed.finalContent()).toContain('w0')
      expect(received).toEqual([{}, {}])
    })

    for (const provider of ['anthropic', 'openai'])
      test(`responses over a provider of ${provider} style`, async () => {
        const stream = openai.responses.stream({
          model: `${provider}/noargs`,
          input: 'Ping',
          tools: [{ type: 'function', name: 'ping', parameters: {}, strict: false }],
        })
        let done: string | undefined
        for await (const event of stream)
          if (event.type === 'response.function_call_arguments.done') done = event.arguments
        const call = (await stream.finalResponse()).output.find(
          (item) => item.type === 'function_call',
        )
        expect(done).toBe('{}')
        expect(call?.type === 'function_call' && call.arguments).toBe('{}')
      })

    test('messages over a provider of openai style', async () => {
      const message = await anthropic.messages
        .stream({
          model: 'openai/noargs',
          max_tokens: 100,
          messages: [{ role: 'user', content: 'Ping' }],
          tools: [{ name: 'ping', input_schema: { type: 'object', properties: {} } }],
        })
        .finalMessage()
      expect(message.content).toEqual([
        expect.objectContaining({ type: 'tool_use', name: 'ping', input: {} }),
      ])
    })
  })

  test('tool-call IDs a Messages-style provider would refuse reach it valid, the call and its result alike', async () => {
    for (const id of ['functions.get_weather:0', 'call 1']) {
      await openai.chat.completions.create({
        model: 'anthropic/tools',
        tools: [ping],
        messages: [
          { role: 'user', content: 'Ping' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id, type: 'function', function: { name: 'ping', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: id, content: 'pong' },
        ],
      })
      const [, call, result] = lastSent().messages
      expect(call!.content[0]!.id).toMatch(/^[a-zA-Z0-9_-]+$/)
      expect(result!.content[0]!.tool_use_id).toBe(call!.content[0]!.id!)
    }
  })
})
