// Tool calls as the official SDKs receive them across provider styles: calls without arguments, legacy
// function calling, and tool-call IDs another style would refuse.
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
  testModel('openai/interleaved', 'fake?tools=2&argsChunks=4&interleave=1'),
  testModel('openai/interleaved-started', 'fake?tools=2&argsChunks=4&interleave=2'),
  testModel('openai/whole-calls', 'fake?tools=2&wholeCalls=1'),
  testModel('openai/functions-ids', 'fake?tools=2&ids=functions'),
  testModel('openai/stop-with-calls', 'fake?tools=2&finish=stop'),
  anthropicTestModel('anthropic/cut-call', 'fake?replay=anthropic/tool-cut'),
]
const ping = {
  type: 'function' as const,
  function: { name: 'ping', parameters: { type: 'object', properties: {} } },
}
const functions = [
  {
    name: 'get_weather',
    parameters: { type: 'object', properties: { location: { type: 'string' } } },
  },
]

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
  const lastSentChat = () =>
    gw.upstream.requests.at(-1)!.body as unknown as {
      messages: { tool_calls?: { id: string }[]; tool_call_id?: string }[]
    }

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

  describe('legacy function calling over a Messages-style provider', () => {
    test('the answer is one function_call with finish reason function_call, whole and streamed', async () => {
      const body = {
        model: 'anthropic/tools',
        messages: [{ role: 'user' as const, content: 'Weather?' }],
        functions,
        function_call: 'auto' as const,
      }
      const whole = await openai.chat.completions.create(body)
      expect(lastSent()).toMatchObject({ tool_choice: { disable_parallel_tool_use: true } })
      const streamed = await openai.chat.completions.stream(body).finalChatCompletion()
      for (const completion of [whole, streamed]) {
        const choice = completion.choices[0]!
        expect(choice.finish_reason).toBe('function_call')
        expect(choice.message.tool_calls ?? []).toEqual([])
        expect(choice.message.function_call?.name).toBe('get_weather')
        expect(JSON.parse(choice.message.function_call!.arguments)).toEqual({
          location: 'Paris',
          unit: 'c',
        })
      }
    })

    test('a function call and its result in the history reach the provider as a matching tool_use and tool_result', async () => {
      const completion = await openai.chat.completions.create({
        model: 'anthropic/tools',
        functions,
        messages: [
          { role: 'user', content: 'Weather?' },
          {
            role: 'assistant',
            content: null,
            function_call: { name: 'get_weather', arguments: '{"location":"Rome"}' },
          },
          { role: 'function', name: 'get_weather', content: 'sunny' },
        ],
      })
      expect(completion.choices[0]!.finish_reason).toBe('stop')
      const [, call, result] = lastSent().messages
      expect(call!.content[0]).toMatchObject({ type: 'tool_use', name: 'get_weather' })
      expect(result!.content[0]).toMatchObject({
        type: 'tool_result',
        tool_use_id: call!.content[0]!.id,
      })
    })

    test('an OpenAI-style provider receives the legacy fields as the client sent them', async () => {
      const completion = await openai.chat.completions.create({
        model: 'openai/tools',
        functions,
        function_call: 'auto',
        messages: [
          { role: 'user', content: 'Weather?' },
          {
            role: 'assistant',
            content: null,
            function_call: { name: 'get_weather', arguments: '{}' },
          },
          { role: 'function', name: 'get_weather', content: 'sunny' },
        ],
      })
      expect(completion.choices[0]!.finish_reason).toBe('stop')
      expect(gw.upstream.requests.at(-1)!.body).toMatchObject({
        functions,
        function_call: 'auto',
        messages: [
          {},
          { function_call: { name: 'get_weather', arguments: '{}' } },
          { role: 'function', name: 'get_weather', content: 'sunny' },
        ],
      })
    })
  })

  test('responses: a call the output limit cut goes on with previous_response_id, as an empty object to a Messages-style provider', async () => {
    const weather = {
      type: 'function' as const,
      name: 'get_weather',
      parameters: { type: 'object', properties: { location: { type: 'string' } } },
      strict: false,
    }
    const cut = await openai.responses
      .stream({ model: 'anthropic/cut-call', input: 'Weather in Paris?', tools: [weather] })
      .finalResponse()
    expect(cut.status).toBe('incomplete')
    const call = cut.output.find((item) => item.type === 'function_call')
    if (call?.type !== 'function_call') throw new Error('expected a function call')
    expect(call.arguments).toBe('{"location": "Par')
    const follow = await openai.responses.create({
      model: 'anthropic/cut-call',
      previous_response_id: cut.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'cut off' }],
      tools: [weather],
    })
    expect(follow.status).toBe('completed')
    const sent = lastSent().messages
    expect(sent[1]!.content).toEqual([
      { type: 'tool_use', id: 'toolu_01Cut', name: 'get_weather', input: {} } as Block,
    ])
    expect(sent[2]!.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_01Cut' })
  })

  describe('agent loops over an OpenAI-style provider: each call answered by the tool messages right after it', () => {
    type ChatSent = {
      messages: { role: string; content: unknown; tool_calls?: { id: string }[] }[]
    }
    const chatSent = () => gw.upstream.requests.at(-1)!.body as unknown as ChatSent
    const weather = {
      type: 'function' as const,
      name: 'get_weather',
      parameters: { type: 'object', properties: { location: { type: 'string' } } },
      strict: false,
    }

    test('responses: instructions sent again with previous_response_id open the context, before the stored call', async () => {
      const first = await openai.responses.create({
        model: 'openai/tools',
        instructions: 'You are an agent.',
        input: 'Weather in Paris?',
        tools: [weather],
      })
      const call = first.output.find((item) => item.type === 'function_call')
      if (call?.type !== 'function_call') throw new Error('expected a function call')
      const follow = await openai.responses.create({
        model: 'openai/tools',
        instructions: 'You are an agent.',
        previous_response_id: first.id,
        input: [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny' }],
        tools: [weather],
      })
      expect(follow.output_text).toContain('w0')
      const sent = chatSent().messages
      expect(sent.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool'])
      expect(sent[2]!.tool_calls?.map((toolCall) => toolCall.id)).toEqual([call.call_id])
    })

    test('messages: a system message between a tool_use and its result comes after the result', async () => {
      await anthropic.messages.create({
        model: 'openai/tools',
        max_tokens: 100,
        tools: [{ name: 'ping', input_schema: { type: 'object', properties: {} } }],
        messages: [
          { role: 'user', content: 'Ping' },
          {
            role: 'assistant',
            content: [{ type: 'tool_use', id: 'toolu_01A', name: 'ping', input: {} }],
          },
          { role: 'system', content: 'Answer in French.' },
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 'toolu_01A', content: 'pong' }],
          },
        ] as Anthropic.MessageParam[],
      })
      expect(chatSent().messages.map((message) => message.role)).toEqual([
        'user',
        'assistant',
        'tool',
        'system',
      ])
    })

    test('messages: the images of tool results follow the results in a user message that names the call', async () => {
      const png =
        'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='
      await anthropic.messages.create({
        model: 'openai/tools',
        max_tokens: 100,
        tools: [{ name: 'screenshot', input_schema: { type: 'object', properties: {} } }],
        messages: [
          { role: 'user', content: 'What is on screen?' },
          {
            role: 'assistant',
            content: [
              { type: 'tool_use', id: 'toolu_01A', name: 'screenshot', input: {} },
              { type: 'tool_use', id: 'toolu_01B', name: 'screenshot', input: {} },
            ],
          },
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 'toolu_01A',
                content: [
                  { type: 'text', text: 'Screen 1:' },
                  { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
                ],
              },
              { type: 'tool_result', tool_use_id: 'toolu_01B', content: 'no screen' },
            ],
          },
        ],
      })
      const sent = chatSent().messages
      expect(sent.map((item) => item.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'user'])
      expect(sent[2]!.content).toBe('Screen 1:[image 1 of this result follows]')
      expect(sent[4]!.content).toEqual([
        { type: 'text', text: 'Images of the result of tool call toolu_01A:' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
      ])
    })
  })

  describe('parallel calls whose argument fragments take turns reach each call whole', () => {
    const tools = [
      { name: 'get_weather', input_schema: { type: 'object' as const, properties: {} } },
      { name: 'get_time', input_schema: { type: 'object' as const, properties: {} } },
    ]
    const expected = [
      { location: 'Paris', unit: 'c' },
      { location: 'Tokyo', unit: 'c' },
    ]

    // interleaved: every call starts, then the fragments take turns; interleaved-started: a call starts
    // after the previous one's first fragment, then the fragments take turns.
    for (const model of ['openai/interleaved', 'openai/interleaved-started']) {
      test(`responses (${model}): each function call item gets its own arguments, whole when done, and no delta after its done`, async () => {
        const stream = openai.responses.stream({
          model,
          input: 'Weather and time?',
          tools: tools.map((tool) => ({
            type: 'function' as const,
            name: tool.name,
            parameters: tool.input_schema,
            strict: false,
          })),
        })
        const finished = new Set<number>()
        const late: number[] = []
        const done: unknown[] = []
        const itemsDone: unknown[] = []
        for await (const event of stream) {
          if (event.type === 'response.output_item.done') {
            finished.add(event.output_index)
            if (event.item.type === 'function_call')
              itemsDone.push(JSON.parse(event.item.arguments))
          }
          if (event.type === 'response.function_call_arguments.done')
            done.push(JSON.parse(event.arguments))
          if (
            event.type === 'response.function_call_arguments.delta' &&
            finished.has(event.output_index)
          )
            late.push(event.output_index)
        }
        const calls = (await stream.finalResponse()).output.flatMap((item) =>
          item.type === 'function_call' ? [JSON.parse(item.arguments)] : [],
        )
        expect(calls).toEqual(expected)
        expect(done).toEqual(expected)
        expect(itemsDone).toEqual(expected)
        expect(late).toEqual([])
      })

      test(`messages (${model}): each tool_use block gets its own input, blocks one after another, and no delta after its stop`, async () => {
        const stream = anthropic.messages.stream({
          model,
          max_tokens: 100,
          messages: [{ role: 'user', content: 'Weather and time?' }],
          tools,
        })
        const stopped = new Set<number>()
        const late: number[] = []
        let open: number | undefined
        const overlapping: number[] = []
        const blocks: unknown[] = []
        stream.on('contentBlock', (block) => {
          if (block.type === 'tool_use') blocks.push(block.input)
        })
        for await (const event of stream) {
          if (event.type === 'content_block_start') {
            if (open !== undefined) overlapping.push(event.index)
            open = event.index
          }
          if (event.type === 'content_block_stop') {
            stopped.add(event.index)
            open = undefined
          }
          if (event.type === 'content_block_delta' && stopped.has(event.index))
            late.push(event.index)
        }
        const message = await stream.finalMessage()
        expect(message.stop_reason).toBe('tool_use')
        expect(message.content.map((block) => block.type === 'tool_use' && block.input)).toEqual(
          expected,
        )
        expect(blocks).toEqual(expected)
        expect(late).toEqual([])
        expect(overlapping).toEqual([])
      })
    }
  })

  describe('OpenAI-compatible servers that stream calls their own way', () => {
    const tools = [
      { name: 'get_weather', input_schema: { type: 'object' as const, properties: {} } },
      { name: 'get_time', input_schema: { type: 'object' as const, properties: {} } },
    ]
    const expected = [
      { location: 'Paris', unit: 'c' },
      { location: 'Tokyo', unit: 'c' },
    ]
    const ask = { max_tokens: 100, messages: [{ role: 'user' as const, content: 'Go' }], tools }

    test('calls whole in one delta without index are separate calls (messages and responses)', async () => {
      const message = await anthropic.messages
        .stream({ ...ask, model: 'openai/whole-calls' })
        .finalMessage()
      expect(message.content.map((block) => block.type === 'tool_use' && block.input)).toEqual(
        expected,
      )
      const response = await openai.responses
        .stream({
          model: 'openai/whole-calls',
          input: 'Go',
          tools: tools.map((tool) => ({
            type: 'function' as const,
            name: tool.name,
            parameters: tool.input_schema,
            strict: false,
          })),
        })
        .finalResponse()
      expect(
        response.output.flatMap((item) =>
          item.type === 'function_call' ? [[item.name, JSON.parse(item.arguments)]] : [],
        ),
      ).toEqual([
        ['get_weather', expected[0]],
        ['get_time', expected[1]],
      ])
    })

    test('calls whole in one delta without index reach a Chat client with their index, which its stream helper needs', async () => {
      const completion = await openai.chat.completions
        .stream({
          model: 'openai/whole-calls',
          messages: [{ role: 'user', content: 'Go' }],
          tools: tools.map((tool) => ({
            type: 'function' as const,
            function: { name: tool.name, parameters: tool.input_schema },
          })),
        })
        .finalChatCompletion()
      const calls = completion.choices[0]!.message.tool_calls ?? []
      expect(
        calls.map((call) =>
          call.type === 'function' ? [call.function.name, JSON.parse(call.function.arguments)] : [],
        ),
      ).toEqual([
        ['get_weather', expected[0]],
        ['get_time', expected[1]],
      ])
    })

    test('a finish reason stop with tool calls is a tool_use turn for a Messages client, whole and streamed', async () => {
      const whole = await anthropic.messages.create({ ...ask, model: 'openai/stop-with-calls' })
      expect(whole.stop_reason).toBe('tool_use')
      const streamed = await anthropic.messages
        .stream({ ...ask, model: 'openai/stop-with-calls' })
        .finalMessage()
      expect(streamed.stop_reason).toBe('tool_use')
      expect(streamed.content.filter((block) => block.type === 'tool_use')).toHaveLength(2)
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

  test('a Messages client gets such IDs of an OpenAI-style provider valid, whole and streamed, and its results match them', async () => {
    const ask = {
      model: 'openai/functions-ids',
      max_tokens: 100,
      tools: [{ name: 'get_weather', input_schema: { type: 'object' as const, properties: {} } }],
      messages: [{ role: 'user' as const, content: 'Weather?' }],
    }
    const whole = await anthropic.messages.create(ask)
    const streamed = await anthropic.messages.stream(ask).finalMessage()
    for (const message of [whole, streamed]) {
      const calls = message.content.filter((block) => block.type === 'tool_use')
      expect(calls).toHaveLength(2)
      for (const call of calls) expect(call.id).toMatch(/^[a-zA-Z0-9_-]+$/)
    }
    // The same call gets the same ID whole and streamed; the results go back under it.
    const ids = whole.content.flatMap((block) => (block.type === 'tool_use' ? [block.id] : []))
    expect(
      streamed.content.flatMap((block) => (block.type === 'tool_use' ? [block.id] : [])),
    ).toEqual(ids)
    await anthropic.messages.create({
      ...ask,
      messages: [
        ...ask.messages,
        { role: 'assistant', content: whole.content },
        {
          role: 'user',
          content: ids.map((id) => ({
            type: 'tool_result' as const,
            tool_use_id: id,
            content: 'sunny',
          })),
        },
      ],
    })
    const sent = lastSentChat().messages
    expect(sent.at(-3)!.tool_calls!.map((call) => call.id)).toEqual(ids)
    expect(sent.slice(-2).map((message) => message.tool_call_id)).toEqual(ids)
  })

  test('a Messages client’s history with such IDs (an earlier turn on another style’s provider) reaches a Messages-style provider valid', async () => {
    const ids = ['functions.get_weather:0', 'toolu_01Valid']
    await anthropic.messages.create({
      model: 'anthropic/tools',
      max_tokens: 100,
      tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: {} } }],
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: ids.map((id) => ({ type: 'tool_use', id, name: 'get_weather', input: {} })),
        },
        {
          role: 'user',
          content: ids.map((id) => ({ type: 'tool_result', tool_use_id: id, content: 'sunny' })),
        },
      ],
    })
    const [, calls, results] = lastSent().messages
    const sent = calls!.content.map((block) => block.id!)
    expect(sent[0]).toMatch(/^[a-zA-Z0-9_-]+$/)
    expect(sent[1]).toBe('toolu_01Valid')
    expect(results!.content.map((block) => block.tool_use_id)).toEqual(sent)
  })
})
