// The neutral conversation as each provider style's request: mapped where the style differs, refused where
// it cannot be said, never forwarded blindly.
import { describe, expect, test } from 'bun:test'
import { ServiceError } from '../../../shared/errors.ts'
import { conversationToMessages } from '../../../proxy/providers/anthropic/to-messages-body.ts'
import { conversationToChat } from '../../../proxy/providers/openai/to-chat-body.ts'
import type { ContentPart, Conversation } from '../../../proxy/core/neutral/conversation.ts'

const image = 'data:image/png;base64,iVBORw0KGgo='
const conversation = (overrides: Partial<Conversation> = {}): Conversation => ({
  turns: [
    { role: 'system', text: 'Be brief.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Look' },
        { type: 'image', url: image, detail: 'low' },
      ],
    },
    { role: 'system', text: 'Use metric.' },
    {
      role: 'assistant',
      text: 'Checking.',
      toolCalls: [
        { id: 'call_1', name: 'look', arguments: '{"x":1}' },
        { id: 'call_2', name: 'look', arguments: '{}' },
      ],
    },
    {
      role: 'tool',
      toolCallId: 'call_1',
      content: [{ type: 'text', text: 'a cat' }],
      isError: false,
    },
    {
      role: 'tool',
      toolCallId: 'call_2',
      content: [{ type: 'text', text: 'a dog' }],
      isError: true,
    },
    { role: 'user', content: [{ type: 'text', text: 'And now?' }] },
  ],
  tools: [
    {
      name: 'look',
      description: 'Look',
      parameters: { type: 'object', properties: { x: { type: 'number' } } },
      strict: true,
    },
  ],
  stop: ['###'],
  stream: false,
  ...overrides,
})

describe('neutral → Messages', () => {
  const body = (overrides: Partial<Conversation> = {}) => {
    const result = conversationToMessages(conversation(overrides), 'claude-x', 4096)
    if (result instanceof ServiceError) throw result
    return result
  }

  test('system text moves to the top; tool results open one user message; images become base64 sources', () => {
    expect(body()).toEqual({
      model: 'claude-x',
      max_tokens: 4096,
      system: 'Be brief.\nUse metric.',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look' },
            {
              type: 'image',
              source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' },
            },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'call_1', name: 'look', input: { x: 1 } },
            { type: 'tool_use', id: 'call_2', name: 'look', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'call_1',
              content: [{ type: 'text', text: 'a cat' }],
            },
            {
              type: 'tool_result',
              tool_use_id: 'call_2',
              content: [{ type: 'text', text: 'a dog' }],
              is_error: true,
            },
            { type: 'text', text: 'And now?' },
          ],
        },
      ],
      tools: [
        {
          name: 'look',
          description: 'Look',
          input_schema: { type: 'object', properties: { x: { type: 'number' } } },
        },
      ],
      stop_sequences: ['###'],
    })
  })

  test('tool results open their user message even after user text that came before them', () => {
    const { messages } = body({
      turns: [
        { role: 'user', content: [{ type: 'text', text: 'Look' }] },
        {
          role: 'assistant',
          text: '',
          toolCalls: [
            { id: 'call_1', name: 'look', arguments: '{}' },
            { id: 'call_2', name: 'look', arguments: '{}' },
          ],
        },
        { role: 'user', content: [{ type: 'text', text: 'Also this' }] },
        {
          role: 'tool',
          toolCallId: 'call_1',
          content: [{ type: 'text', text: 'a' }],
          isError: false,
        },
        {
          role: 'tool',
          toolCallId: 'call_2',
          content: [{ type: 'text', text: 'b' }],
          isError: false,
        },
      ],
    }) as { messages: { role: string; content: { type: string; tool_use_id?: string }[] }[] }
    expect(messages.at(-1)!.content.map((block) => block.tool_use_id ?? block.type)).toEqual([
      'call_1',
      'call_2',
      'text',
    ])
  })

  test('options are mapped: temperature capped at 1, tool choice, parallel calls, JSON format, user, output limit', () => {
    const result = body({
      temperature: 1.7,
      toolChoice: 'required',
      parallelToolCalls: false,
      responseFormat: { type: 'json_object' },
      user: 'u-1',
      maxOutputTokens: 50,
      seed: 7,
      stream: true,
    })
    expect(result).toMatchObject({
      temperature: 1,
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      metadata: { user_id: 'u-1' },
      max_tokens: 50,
      stream: true,
    })
    expect(result.system).toContain('Respond with a single JSON object')
    expect(result).not.toHaveProperty('seed')
    expect(body({ toolChoice: { name: 'look' } }).tool_choice).toEqual({
      type: 'tool',
      name: 'look',
    })
  })

  test('allowed tools: only those are offered, the mode as its tool choice', () => {
    const tools = [
      { name: 'look', parameters: { type: 'object' } },
      { name: 'touch', parameters: { type: 'object' } },
    ]
    const required = body({ tools, toolChoice: { allowed: ['touch'], mode: 'required' } })
    expect((required.tools as { name: string }[]).map((tool) => tool.name)).toEqual(['touch'])
    expect(required.tool_choice).toEqual({ type: 'any' })
    const auto = body({ tools, toolChoice: { allowed: ['look'], mode: 'auto' } })
    expect((auto.tools as { name: string }[]).map((tool) => tool.name)).toEqual(['look'])
    expect(auto.tool_choice).toBeUndefined()
  })

  test('temperature and top_p together: only temperature goes, as current models refuse both; top_p alone goes', () => {
    const both = body({ temperature: 0.2, topP: 0.9 })
    expect(both.temperature).toBe(0.2)
    expect(both).not.toHaveProperty('top_p')
    const alone = body({ topP: 0.9 })
    expect(alone.top_p).toBe(0.9)
    expect(alone).not.toHaveProperty('temperature')
  })

  test('images of other types and tool arguments that are not JSON objects are refused', () => {
    const bmp = conversationToMessages(
      conversation({
        turns: [{ role: 'user', content: [{ type: 'image', url: 'data:image/bmp;base64,Qk0=' }] }],
      }),
      'm',
      10,
    )
    expect(bmp).toBeInstanceOf(ServiceError)
    const broken = conversationToMessages(
      conversation({
        turns: [
          { role: 'assistant', text: '', toolCalls: [{ id: 'c', name: 'n', arguments: '[1' }] },
        ],
      }),
      'm',
      10,
    )
    expect(broken).toBeInstanceOf(ServiceError)
  })

  test('an image media type is sent in lowercase, and JPEG by the name the style takes', () => {
    for (const type of ['image/JPEG', 'image/jpg', 'IMAGE/JPG']) {
      const result = conversationToMessages(
        conversation({
          turns: [
            { role: 'user', content: [{ type: 'image', url: `data:${type};base64,/9j/4AAQ` }] },
          ],
        }),
        'm',
        10,
      )
      expect((result as { messages: unknown[] }).messages[0]).toEqual({
        role: 'user',
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQ' } },
        ],
      })
    }
  })

  test('tool-call IDs the style rejects become valid ones, the same for the call and its result', () => {
    const ids = ['functions.get_weather:0', 'call 1', 'call_1', 'functions_get_weather_0']
    const result = conversationToMessages(
      conversation({
        turns: [
          { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
          {
            role: 'assistant',
            text: '',
            toolCalls: ids.map((id) => ({ id, name: 'look', arguments: '{}' })),
          },
          ...ids.map((id) => ({
            role: 'tool' as const,
            toolCallId: id,
            content: [{ type: 'text' as const, text: 'sunny' }],
            isError: false,
          })),
        ],
      }),
      'm',
      10,
    ) as { messages: { content: { id?: string; tool_use_id?: string }[] }[] }
    const used = result.messages[1]!.content.map((block) => block.id!)
    const answered = result.messages[2]!.content.map((block) => block.tool_use_id!)
    expect(answered).toEqual(used)
    for (const id of used) expect(id).toMatch(/^[a-zA-Z0-9_-]+$/)
    expect(new Set(used).size).toBe(ids.length)
    expect(used[0]).toMatch(/^functions_get_weather_0_[0-9a-f]{12}$/)
    expect(used[2]).toBe('call_1')
    expect(used[3]).toBe('functions_get_weather_0')
  })

  test('a message without content is left out; system text alone becomes the user message; nothing at all is refused', () => {
    const withEmpty = body({
      turns: [
        { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
        { role: 'assistant', text: '', toolCalls: [] },
        { role: 'user', content: [{ type: 'text', text: '' }] },
        { role: 'user', content: [{ type: 'text', text: 'Still there?' }] },
      ],
    })
    expect(withEmpty.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Hi' },
          { type: 'text', text: 'Still there?' },
        ],
      },
    ])

    const systemOnly = body({
      turns: [
        { role: 'system', text: 'Write a haiku about the sea.' },
        { role: 'user', content: [{ type: 'text', text: '' }] },
      ],
      responseFormat: { type: 'json_object' },
    })
    expect(systemOnly.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Write a haiku about the sea.' }] },
    ])
    expect(systemOnly.system).toBe('Respond with a single JSON object and nothing else.')

    const nothing = conversationToMessages(
      conversation({ turns: [{ role: 'user', content: [{ type: 'text', text: '' }] }] }),
      'claude-x',
      4096,
    )
    expect(nothing).toBeInstanceOf(ServiceError)
    expect(nothing).toMatchObject({ code: 'invalid_request', details: { param: 'messages' } })
  })

  test('an image given by URL stays a URL', () => {
    const result = conversationToMessages(
      conversation({
        turns: [{ role: 'user', content: [{ type: 'image', url: 'https://example.com/cat.png' }] }],
      }),
      'm',
      10,
    )
    expect((result as { messages: unknown[] }).messages[0]).toEqual({
      role: 'user',
      content: [{ type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } }],
    })
  })
  test('a PDF becomes a base64 document and a text file a text document, titled by the name; other files are refused', () => {
    const files = (...content: ContentPart[]) =>
      conversationToMessages(conversation({ turns: [{ role: 'user', content }] }), 'm', 10)
    const sent = files(
      { type: 'file', mediaType: 'application/pdf', data: 'JVBERi0=', filename: 'a.pdf' },
      { type: 'file', mediaType: 'text/plain', data: Buffer.from('héllo').toString('base64') },
      { type: 'file', mediaType: 'text/csv', data: Buffer.from('a,b').toString('base64') },
    )
    expect((sent as { messages: unknown[] }).messages[0]).toEqual({
      role: 'user',
      content: [
        {
          type: 'document',
          source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' },
          title: 'a.pdf',
        },
        { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'héllo' } },
        { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'a,b' } },
      ],
    })
    const sheet = files({ type: 'file', mediaType: 'application/vnd.ms-excel', data: 'YSxi' })
    expect(sheet).toBeInstanceOf(ServiceError)
    expect((sheet as ServiceError).message).toBe(
      "Files of type application/vnd.ms-excel are not supported by this model's provider (PDF or text).",
    )
  })

  test('a file in a tool result stays in the result, as a document', () => {
    const result = conversationToMessages(
      conversation({
        turns: [
          { role: 'user', content: [{ type: 'text', text: 'Read it' }] },
          {
            role: 'assistant',
            text: '',
            toolCalls: [{ id: 'call_1', name: 'read', arguments: '{}' }],
          },
          {
            role: 'tool',
            toolCallId: 'call_1',
            content: [{ type: 'file', mediaType: 'application/pdf', data: 'JVBERi0=' }],
            isError: false,
          },
        ],
      }),
      'm',
      10,
    )
    expect((result as { messages: unknown[] }).messages[2]).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'call_1',
          content: [
            {
              type: 'document',
              source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' },
            },
          ],
        },
      ],
    })
  })
})

describe('neutral → Chat Completions', () => {
  const chatBody = (...args: Parameters<typeof conversationToChat>) => {
    const result = conversationToChat(...args)
    if (result instanceof ServiceError) throw result
    return result
  }

  test('system text in place, tool messages, image parts, options', () => {
    const result = chatBody(
      conversation({
        toolChoice: { name: 'look' },
        maxOutputTokens: 50,
        responseFormat: { type: 'json_schema', name: 'r', schema: { type: 'object' } },
        stream: true,
        topK: 3,
      }),
      'gpt-x',
    )
    expect(result.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look' },
          { type: 'image_url', image_url: { url: image, detail: 'low' } },
        ],
      },
      { role: 'system', content: 'Use metric.' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'look', arguments: '{"x":1}' } },
          { id: 'call_2', type: 'function', function: { name: 'look', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'a cat' },
      { role: 'tool', tool_call_id: 'call_2', content: '[error] a dog' },
      { role: 'user', content: 'And now?' },
    ])
    expect(result).toMatchObject({
      model: 'gpt-x',
      tool_choice: { type: 'function', function: { name: 'look' } },
      max_completion_tokens: 50,
      stop: ['###'],
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'r', schema: { type: 'object' } },
      },
      stream: true,
      stream_options: { include_usage: true },
    })
    expect(result).not.toHaveProperty('top_k')
  })

  test('system text between tool calls and their results comes after the last result', () => {
    const call = (id: string) => ({ id, name: 'look', arguments: '{}' })
    const result = (id: string) => ({
      role: 'tool' as const,
      toolCallId: id,
      content: [{ type: 'text' as const, text: id }],
      isError: false,
    })
    const roles = (turns: Conversation['turns']) =>
      (chatBody(conversation({ turns }), 'gpt-x').messages as { role: string }[]).map(
        (message) => message.role,
      )
    const ask = { role: 'user' as const, content: [{ type: 'text' as const, text: 'Look' }] }
    const calls = { role: 'assistant' as const, text: '', toolCalls: [call('a'), call('b')] }
    const system = { role: 'system' as const, text: 'Use metric.' }
    expect(roles([ask, calls, system, result('a'), system, result('b'), ask])).toEqual([
      'user',
      'assistant',
      'tool',
      'tool',
      'system',
      'system',
      'user',
    ])
    // A call left unanswered does not hold the system text back past the next turn.
    expect(roles([ask, calls, result('a'), system, ask])).toEqual([
      'user',
      'assistant',
      'tool',
      'system',
      'user',
    ])
  })

  test('user text between tool calls and their results comes after the last result', () => {
    const call = (id: string) => ({ id, name: 'look', arguments: '{}' })
    const result = (id: string) => ({
      role: 'tool' as const,
      toolCallId: id,
      content: [{ type: 'text' as const, text: id }],
      isError: false,
    })
    const messages = (turns: Conversation['turns']) =>
      (
        chatBody(conversation({ turns }), 'gpt-x').messages as { role: string; content: unknown }[]
      ).map(
        (message) =>
          `${message.role}:${typeof message.content === 'string' ? message.content : ''}`,
      )
    const ask = (text: string) => ({
      role: 'user' as const,
      content: [{ type: 'text' as const, text }],
    })
    const calls = { role: 'assistant' as const, text: '', toolCalls: [call('a'), call('b')] }
    expect(messages([ask('Look'), calls, ask('Also this'), result('a'), result('b')])).toEqual([
      'user:Look',
      'assistant:',
      'tool:a',
      'tool:b',
      'user:Also this',
    ])
    // With no results after it, the text stays where it was.
    expect(messages([ask('Look'), calls, ask('Never mind'), calls])).toEqual([
      'user:Look',
      'assistant:',
      'user:Never mind',
      'assistant:',
    ])
  })

  test('the images of a tool result follow the results in a user message naming the call', () => {
    const result = chatBody(
      conversation({
        turns: [
          { role: 'user', content: [{ type: 'text', text: 'Look' }] },
          {
            role: 'assistant',
            text: '',
            toolCalls: [
              { id: 'call_1', name: 'look', arguments: '{}' },
              { id: 'call_2', name: 'look', arguments: '{}' },
            ],
          },
          {
            role: 'tool',
            toolCallId: 'call_1',
            content: [
              { type: 'text', text: 'Two views:' },
              { type: 'image', url: image },
              { type: 'image', url: 'https://example.com/b.png', detail: 'high' },
            ],
            isError: false,
          },
          {
            role: 'tool',
            toolCallId: 'call_2',
            content: [{ type: 'text', text: 'nothing' }],
            isError: false,
          },
        ],
      }),
      'gpt-x',
    )
    expect((result.messages as unknown[]).slice(2)).toEqual([
      {
        role: 'tool',
        tool_call_id: 'call_1',
        content: 'Two views:[image 1 of this result follows][image 2 of this result follows]',
      },
      { role: 'tool', tool_call_id: 'call_2', content: 'nothing' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Images of the result of tool call call_1:' },
          { type: 'image_url', image_url: { url: image } },
          { type: 'image_url', image_url: { url: 'https://example.com/b.png', detail: 'high' } },
        ],
      },
    ])
  })

  test("a PDF goes as the style's file part, with a name when it came without one; a text file as text", () => {
    const result = chatBody(
      conversation({
        turns: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Summarize' },
              { type: 'file', mediaType: 'application/pdf', data: 'JVBERi0=' },
              { type: 'file', mediaType: 'text/plain', data: 'aGk=', filename: 'notes.txt' },
            ],
          },
        ],
      }),
      'gpt-x',
    )
    expect(result.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Summarize' },
          {
            type: 'file',
            file: { filename: 'document.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' },
          },
          // The style's file part is for PDFs: a text file is read as its text, after its name.
          { type: 'text', text: 'notes.txt\n\nhi' },
        ],
      },
    ])
  })

  test('the files of a tool result follow the results in a user message naming the call', () => {
    const pdf: ContentPart = { type: 'file', mediaType: 'application/pdf', data: 'JVBERi0=' }
    const result = chatBody(
      conversation({
        turns: [
          { role: 'user', content: [{ type: 'text', text: 'Read it' }] },
          {
            role: 'assistant',
            text: '',
            toolCalls: [{ id: 'call_1', name: 'read', arguments: '{}' }],
          },
          {
            role: 'tool',
            toolCallId: 'call_1',
            content: [
              { type: 'text', text: 'The file:' },
              pdf,
              { type: 'image', url: image },
              { type: 'file', mediaType: 'text/markdown', data: 'IyBIaQ==' },
            ],
            isError: false,
          },
        ],
      }),
      'gpt-x',
    )
    expect((result.messages as unknown[]).slice(2)).toEqual([
      {
        role: 'tool',
        tool_call_id: 'call_1',
        content: 'The file:[file 1 of this result follows][image 1 of this result follows]# Hi',
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Images and files of the result of tool call call_1:' },
          {
            type: 'file',
            file: { filename: 'document.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' },
          },
          { type: 'image_url', image_url: { url: image } },
        ],
      },
    ])
  })

  test('four stop sequences go as they are; a fifth is refused naming stop_sequences, never cut', () => {
    const four = ['a', 'b', 'c', 'd']
    expect(chatBody(conversation({ stop: four }), 'gpt-x').stop).toEqual(four)
    const refused = conversationToChat(conversation({ stop: [...four, 'e'] }), 'gpt-x')
    expect(refused).toBeInstanceOf(ServiceError)
    const error = refused as ServiceError
    expect(error.code).toBe('invalid_request')
    expect(error.details.param).toBe('stop_sequences')
    expect(error.message).toContain("stop_sequences: at most 4 with this model's provider")
  })

  test('a tool choice of auto or none without tools is not sent, as the style refuses tool_choice without tools', () => {
    for (const toolChoice of ['auto', 'none'] as const)
      expect(chatBody(conversation({ tools: [], toolChoice }), 'gpt-x').tool_choice).toBeUndefined()
    expect(chatBody(conversation({ tools: [], toolChoice: 'required' }), 'gpt-x').tool_choice).toBe(
      'required',
    )
    expect(chatBody(conversation({ toolChoice: 'none' }), 'gpt-x').tool_choice).toBe('none')
  })

  test('allowed tools go as the style names them, every tool still offered', () => {
    const body = chatBody(
      conversation({ toolChoice: { allowed: ['look'], mode: 'required' } }),
      'gpt-x',
    )
    expect(body.tool_choice).toEqual({
      type: 'allowed_tools',
      allowed_tools: {
        mode: 'required',
        tools: [{ type: 'function', function: { name: 'look' } }],
      },
    })
    expect(body.tools).toHaveLength(1)
  })

  test('a reasoning effort goes where the catalog says the model takes one or does not say; a thinking budget becomes one only where it says so', () => {
    const effort = (overrides: Partial<Conversation>, reasoning?: boolean) =>
      chatBody(conversation(overrides), 'gpt-x', reasoning).reasoning_effort
    // The client's own effort: sent unless the model takes none.
    expect(effort({ reasoningEffort: 'high' }, true)).toBe('high')
    expect(effort({ reasoningEffort: 'high' })).toBe('high')
    expect(effort({ reasoningEffort: 'high' }, false)).toBeUndefined()
    // A Messages client's thinking budget: an effort for a model that takes one.
    expect(effort({ thinkingBudget: 1_024 }, true)).toBe('low')
    expect(effort({ thinkingBudget: 8_191 }, true)).toBe('low')
    expect(effort({ thinkingBudget: 8_192 }, true)).toBe('medium')
    expect(effort({ thinkingBudget: 24_576 }, true)).toBe('high')
    expect(effort({ thinkingBudget: 10_000 })).toBeUndefined()
    expect(effort({ thinkingBudget: 10_000 }, false)).toBeUndefined()
    expect(effort({}, true)).toBeUndefined()
  })
})
