// Each client style's request in neutral form, and the refusals of what another provider style cannot carry.
import { describe, expect, test } from 'bun:test'
import type { ServiceError } from '../../../../shared/errors.ts'
import type { ChatRequest } from '../../../../shared/schemas/chat.ts'
import type { MessagesRequest } from '../../../../shared/schemas/messages.ts'
import type { ResponsesRequest } from '../../../../shared/schemas/responses.ts'
import { chatConversation } from '../../../../proxy/pipeline/styles/chat/to-conversation.ts'
import { messagesConversation } from '../../../../proxy/pipeline/styles/messages/to-conversation.ts'
import { responsesConversation } from '../../../../proxy/pipeline/styles/responses/to-conversation.ts'
import type { Conversation, Turn } from '../../../../proxy/core/neutral/conversation.ts'

const ok = (result: Conversation | ServiceError) => {
  if (!('turns' in result)) throw new Error(`refused: ${result.message}`)
  return result
}
const refused = (result: Conversation | ServiceError) => {
  if ('turns' in result) throw new Error('expected a refusal')
  return result
}
const image = 'data:image/png;base64,iVBORw0KGgo='

describe('Chat Completions → neutral', () => {
  const chat = (body: object) => chatConversation({ model: 'a/b', ...body } as ChatRequest)

  test('system and developer text, user parts with images, assistant tool calls, tool results', () => {
    const result = ok(
      chat({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'developer', content: [{ type: 'text', text: 'Use metric.' }] },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url: image, detail: 'high' } },
            ],
          },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'look', arguments: '{"x":1}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: 'a cat' },
        ],
        tools: [
          {
            type: 'function',
            function: {
              name: 'look',
              parameters: { type: 'object', properties: { x: { type: 'number' } } },
            },
          },
        ],
        tool_choice: { type: 'function', function: { name: 'look' } },
        stop: '###',
        max_tokens: 50,
        temperature: 0.5,
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'r', schema: { type: 'object' }, strict: true },
        },
        user: 'u-1',
      }),
    )
    expect(result.turns).toEqual([
      { role: 'system', text: 'Be brief.' },
      { role: 'system', text: 'Use metric.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image', url: image, detail: 'high' },
        ],
      },
      {
        role: 'assistant',
        text: '',
        toolCalls: [{ id: 'call_1', name: 'look', arguments: '{"x":1}' }],
      },
      {
        role: 'tool',
        toolCallId: 'call_1',
        content: [{ type: 'text', text: 'a cat' }],
        isError: false,
      },
    ])
    expect(result).toMatchObject({
      toolChoice: { name: 'look' },
      stop: ['###'],
      maxOutputTokens: 50,
      temperature: 0.5,
      responseFormat: { type: 'json_schema', name: 'r', schema: { type: 'object' }, strict: true },
      user: 'u-1',
    })
    expect(result.tools).toEqual([
      { name: 'look', parameters: { type: 'object', properties: { x: { type: 'number' } } } },
    ])
  })

  test('a file part given as a data URL becomes a file; a PDF with parameters before base64 too', () => {
    const part = (file: object) =>
      ok(chat({ messages: [{ role: 'user', content: [{ type: 'file', file }] }] })).turns[0]
    expect(part({ filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' })).toEqual({
      role: 'user',
      content: [
        { type: 'file', mediaType: 'application/pdf', data: 'JVBERi0=', filename: 'a.pdf' },
      ],
    })
    expect(part({ file_data: 'data:Application/PDF;name=a.pdf;base64,JVBERi0=' })).toEqual({
      role: 'user',
      content: [{ type: 'file', mediaType: 'application/pdf', data: 'JVBERi0=' }],
    })
  })

  test('legacy function calls and results become tool calls and results with matching IDs', () => {
    const functions = [{ name: 'get_weather', parameters: { type: 'object', properties: {} } }]
    const result = ok(
      chat({
        messages: [
          { role: 'user', content: 'Weather?' },
          {
            role: 'assistant',
            content: null,
            function_call: { name: 'get_weather', arguments: '{"location":"Rome"}' },
          },
          { role: 'function', name: 'get_weather', content: 'sunny' },
        ],
        functions,
        function_call: 'auto',
      }),
    )
    expect(result.turns.slice(1)).toEqual([
      {
        role: 'assistant',
        text: '',
        toolCalls: [
          { id: 'call_1_get_weather', name: 'get_weather', arguments: '{"location":"Rome"}' },
        ],
      },
      {
        role: 'tool',
        toolCallId: 'call_1_get_weather',
        content: [{ type: 'text', text: 'sunny' }],
        isError: false,
      },
    ])
    expect(result).toMatchObject({ toolChoice: 'auto', parallelToolCalls: false })
    expect(result.tools.map((tool) => tool.name)).toEqual(['get_weather'])
  })

  test('what another provider cannot carry is refused by field', () => {
    expect(refused(chat({ messages: [{ role: 'user', content: 'hi' }], n: 2 })).details.param).toBe(
      'n',
    )
    const audio = refused(
      chat({
        messages: [
          {
            role: 'user',
            content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }],
          },
        ],
      }),
    )
    expect(audio.details.param).toBe('messages[0].content[0]')
    const byId = refused(
      chat({
        messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-abc' } }] }],
      }),
    )
    expect(byId.details.param).toBe('messages[0].content[0].file.file_data')
    expect(
      refused(chat({ messages: [{ role: 'function', name: 'f', content: 'x' }] })).details.param,
    ).toBe('messages[0]')
    expect(
      refused(
        chat({
          messages: [{ role: 'user', content: 'hi' }],
          tools: [{ type: 'custom', custom: { name: 'x' } }],
        }),
      ).details.param,
    ).toBe('tools[0]')
  })

  test('log probabilities and web search, which would be answered without, are refused by field', () => {
    const hi = [{ role: 'user', content: 'hi' }]
    expect(refused(chat({ messages: hi, logprobs: true, top_logprobs: 3 })).details.param).toBe(
      'logprobs',
    )
    expect(refused(chat({ messages: hi, web_search_options: {} })).details.param).toBe(
      'web_search_options',
    )
    expect(
      ok(chat({ messages: hi, logprobs: false, web_search_options: null })).turns,
    ).toHaveLength(1)
  })

  test('a response format of another type, or a JSON schema format without its json_schema, is refused by field', () => {
    const format = (response_format: unknown) =>
      chat({ messages: [{ role: 'user', content: 'hi' }], response_format })
    expect(refused(format({ type: 'xml' })).details.param).toBe('response_format.type')
    expect(refused(format({ type: 'json_schema' })).details.param).toBe(
      'response_format.json_schema',
    )
    expect(
      ok(format({ type: 'json_schema', json_schema: { name: 'any' } })).responseFormat,
    ).toEqual({ type: 'json_object' })
    expect(ok(format({ type: 'text' })).responseFormat).toBeUndefined()
  })

  test('an assistant message given by its refusal is its text; an earlier audio answer and custom tool calls are refused by field', () => {
    const hi = { role: 'user', content: 'hi' }
    const after = (message: Record<string, unknown>) =>
      chat({ messages: [hi, { role: 'assistant', ...message }, hi] })
    expect(ok(after({ refusal: 'I cannot.' })).turns[1]).toEqual({
      role: 'assistant',
      text: 'I cannot.',
      toolCalls: [],
    })
    expect(refused(after({ audio: { id: 'audio_1' } })).details.param).toBe('messages[1].audio')
    const custom = refused(
      after({
        content: null,
        tool_calls: [{ id: 'call_1', type: 'custom', custom: { name: 'sql', input: 'x' } }],
      }),
    )
    expect(custom.details.param).toBe('messages[1].tool_calls[0]')
    expect(custom.message).toContain('custom tool calls')
  })

  test('allowed tools keep their names and mode; another kind of allowed tool is refused by field', () => {
    const choice = (allowed_tools: unknown) =>
      chat({
        messages: [{ role: 'user', content: 'hi' }],
        tool_choice: { type: 'allowed_tools', allowed_tools },
      })
    expect(
      ok(choice({ mode: 'required', tools: [{ type: 'function', function: { name: 'look' } }] }))
        .toolChoice,
    ).toEqual({ allowed: ['look'], mode: 'required' })
    expect(
      refused(choice({ mode: 'auto', tools: [{ type: 'custom', custom: { name: 'sql' } }] }))
        .details.param,
    ).toBe('tool_choice.allowed_tools')
  })

  test('tool calls that are not a list of calls are refused naming them', () => {
    const calls = (tool_calls: unknown) =>
      chat({
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', tool_calls },
        ],
      })
    expect(refused(calls(5)).details.param).toBe('messages[1].tool_calls')
    expect(refused(calls({ id: 'call_1' })).details.param).toBe('messages[1].tool_calls')
    expect(refused(calls([null])).details.param).toBe('messages[1].tool_calls[0]')
  })
})

describe('Messages → neutral', () => {
  const messages = (body: object) =>
    messagesConversation({ model: 'a/b', max_tokens: 100, ...body } as MessagesRequest)

  test('system blocks, images, tool results opening the user turn, thinking left out', () => {
    const result = ok(
      messages({
        system: [
          { type: 'text', text: 'Be brief.' },
          { type: 'text', text: 'Use metric.' },
        ],
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
              { type: 'thinking', thinking: 'hmm', signature: 's' },
              { type: 'text', text: 'Checking.' },
              { type: 'tool_use', id: 'toolu_1', name: 'look', input: { x: 1 } },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_1', content: 'a cat', is_error: true },
              { type: 'text', text: 'And now?' },
            ],
          },
        ],
        tools: [{ name: 'look', input_schema: { type: 'object', properties: {} } }],
        tool_choice: { type: 'any', disable_parallel_tool_use: true },
        stop_sequences: ['###'],
        top_k: 5,
        metadata: { user_id: 'u-1' },
      }),
    )
    expect(result.turns).toEqual([
      { role: 'system', text: 'Be brief.\nUse metric.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look' },
          { type: 'image', url: image },
        ],
      },
      {
        role: 'assistant',
        text: 'Checking.',
        toolCalls: [{ id: 'toolu_1', name: 'look', arguments: '{"x":1}' }],
      },
      {
        role: 'tool',
        toolCallId: 'toolu_1',
        content: [{ type: 'text', text: 'a cat' }],
        isError: true,
      },
      { role: 'user', content: [{ type: 'text', text: 'And now?' }] },
    ])
    expect(result).toMatchObject({
      toolChoice: 'required',
      parallelToolCalls: false,
      stop: ['###'],
      topK: 5,
      maxOutputTokens: 100,
      user: 'u-1',
    })
  })

  test('a plain-text document is sent as text, after its title and context', () => {
    const document = (source: object, more: object = {}) =>
      ok(
        messages({
          messages: [
            {
              role: 'user',
              content: [
                { type: 'document', source, ...more },
                { type: 'text', text: 'Sum it up.' },
              ],
            },
          ],
        }),
      ).turns
    expect(
      document(
        { type: 'text', media_type: 'text/plain', data: 'The grass is green.' },
        { title: 'Notes', context: 'From the garden log', citations: { enabled: true } },
      ),
    ).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Notes\n\nFrom the garden log\n\nThe grass is green.' },
          { type: 'text', text: 'Sum it up.' },
        ],
      },
    ])
    const content = (source: object) =>
      (document(source)[0] as Extract<Turn, { role: 'user' }>).content[0]
    expect(content({ type: 'content', content: 'One line.' })).toEqual({
      type: 'text',
      text: 'One line.',
    })
    expect(
      content({
        type: 'content',
        content: [
          { type: 'text', text: 'First.' },
          { type: 'text', text: 'Second.' },
        ],
      }),
    ).toEqual({ type: 'text', text: 'First.\n\nSecond.' })
  })

  test('a PDF document becomes a file named by its title, after its context', () => {
    const pdf = messages({
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'document',
              source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' },
              title: 'report.pdf',
              context: 'The annual report',
            },
            { type: 'text', text: 'Summarize it.' },
          ],
        },
      ],
    })
    expect(ok(pdf).turns).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'The annual report' },
          {
            type: 'file',
            mediaType: 'application/pdf',
            data: 'JVBERi0xLjQK',
            filename: 'report.pdf',
          },
          { type: 'text', text: 'Summarize it.' },
        ],
      },
    ])
  })

  test('documents by URL or file ID, server tools and MCP servers are refused by field', () => {
    const document = (source: object) =>
      messages({ messages: [{ role: 'user', content: [{ type: 'document', source }] }] })
    for (const source of [
      { type: 'url', url: 'https://example.com/a.pdf' },
      { type: 'file', file_id: 'file_011' },
      { type: 'base64', media_type: 'text/plain', data: 'aGk=' },
      { type: 'content', content: [{ type: 'image', source: { type: 'url', url: 'x' } }] },
    ]) {
      const error = refused(document(source))
      expect(error.details.param).toBe('messages[0].content[0]')
      expect(error.message).toContain('only plain-text and PDF documents given inline')
    }
    const search = messages({
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ type: 'web_search_20250305', name: 'web_search' }],
    })
    expect(refused(search).details.param).toBe('tools[0]')
    const mcp = messages({
      messages: [{ role: 'user', content: 'hi' }],
      mcp_servers: [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'example' }],
    })
    expect(refused(mcp).details.param).toBe('mcp_servers')
    expect(
      ok(messages({ messages: [{ role: 'user', content: 'hi' }], mcp_servers: [] })).turns,
    ).toHaveLength(1)
  })

  test('a tool choice another provider has no equivalent for is refused, not dropped', () => {
    const choice = (tool_choice: unknown) =>
      messages({ messages: [{ role: 'user', content: 'hi' }], tool_choice })
    expect(refused(choice({ type: 'banana' })).details.param).toBe('tool_choice')
    expect(refused(choice({ type: 'tool' })).details.param).toBe('tool_choice')
    expect(ok(choice({ type: 'tool', name: 'look' })).toolChoice).toEqual({ name: 'look' })
  })

  test('a thinking setting of no known form is refused, not dropped', () => {
    const thinking = (value: unknown) =>
      messages({ messages: [{ role: 'user', content: 'hi' }], thinking: value })
    expect(refused(thinking({ type: 'deep' })).details.param).toBe('thinking')
    expect(refused(thinking({ type: 'enabled' })).details.param).toBe('thinking')
    expect(ok(thinking({ type: 'enabled', budget_tokens: 2048 })).thinkingBudget).toBe(2048)
    expect(ok(thinking({ type: 'adaptive' })).thinkingBudget).toBeUndefined()
    expect(ok(thinking({ type: 'disabled' })).thinkingBudget).toBeUndefined()
    expect(ok(thinking({ type: 'between_tools' })).thinkingBudget).toBeUndefined()
  })

  test('an output format and effort become the JSON format and reasoning effort', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } }
    const result = ok(
      messages({
        messages: [{ role: 'user', content: 'hi' }],
        output_config: { effort: 'max', format: { type: 'json_schema', schema } },
      }),
    )
    expect(result.responseFormat).toEqual({ type: 'json_schema', name: 'response', schema })
    expect(result.reasoningEffort).toBe('max')
    expect(
      ok(
        messages({
          messages: [{ role: 'user', content: 'hi' }],
          output_config: { effort: null, format: null },
        }),
      ).responseFormat,
    ).toBeUndefined()
    expect(
      refused(
        messages({
          messages: [{ role: 'user', content: 'hi' }],
          output_config: { format: { type: 'xml' } },
        }),
      ).details.param,
    ).toBe('output_config.format')
  })

  test('a region to run in and a request that only warms the cache are refused by field; hints are left out', () => {
    const hi = [{ role: 'user', content: 'hi' }]
    expect(refused(messages({ messages: hi, inference_geo: 'us' })).details.param).toBe(
      'inference_geo',
    )
    expect(refused(messages({ messages: hi, max_tokens: 0 })).details.param).toBe('max_tokens')
    expect(
      ok(
        messages({
          messages: hi,
          inference_geo: null,
          speed: 'fast',
          cache_control: { type: 'ephemeral', ttl: '1h' },
          diagnostics: { previous_message_id: null },
        }),
      ).turns,
    ).toHaveLength(1)
  })

  test('a tool result whose content is neither text nor blocks is refused naming it', () => {
    const result = (content: unknown) =>
      messages({
        messages: [
          { role: 'user', content: 'hi' },
          {
            role: 'assistant',
            content: [{ type: 'tool_use', id: 'toolu_1', name: 'look', input: {} }],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content }] },
        ],
      })
    expect(refused(result(5)).details.param).toBe('messages[2].content[0].content')
    expect(refused(result({ type: 'text', text: 'x' })).details.param).toBe(
      'messages[2].content[0].content',
    )
    expect(refused(result([{ type: 'text', text: 'x' }, null])).details.param).toBe(
      'messages[2].content[0].content[1]',
    )
    expect(ok(result(null)).turns[2]).toMatchObject({ role: 'tool', content: [] })
  })
})

describe('Responses → neutral', () => {
  const responses = (body: object, previous = []) =>
    responsesConversation({ model: 'a/b', ...body } as ResponsesRequest, previous)

  test('instructions, then stored turns, then items; function calls merge into one assistant turn', () => {
    const earlier = [
      { role: 'user' as const, content: [{ type: 'text' as const, text: 'Earlier' }] },
    ]
    const result = ok(
      responses(
        {
          instructions: 'Be brief.',
          input: [
            {
              role: 'user',
              content: [
                { type: 'input_text', text: 'Look' },
                { type: 'input_image', image_url: image, detail: 'auto' },
              ],
            },
            { type: 'function_call', call_id: 'call_1', name: 'look', arguments: '{}' },
            { type: 'function_call', call_id: 'call_2', name: 'look', arguments: '{"y":2}' },
            { type: 'function_call_output', call_id: 'call_1', output: 'a cat' },
            { type: 'reasoning', id: 'rs_1', summary: [] },
          ],
          text: { format: { type: 'json_object' } },
          max_output_tokens: 64,
        },
        earlier as never,
      ),
    )
    expect(result.turns).toEqual([
      { role: 'system', text: 'Be brief.' },
      ...earlier,
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look' },
          { type: 'image', url: image },
        ],
      },
      {
        role: 'assistant',
        text: '',
        toolCalls: [
          { id: 'call_1', name: 'look', arguments: '{}' },
          { id: 'call_2', name: 'look', arguments: '{"y":2}' },
        ],
      },
      {
        role: 'tool',
        toolCallId: 'call_1',
        content: [{ type: 'text', text: 'a cat' }],
        isError: false,
      },
    ])
    expect(result).toMatchObject({ responseFormat: { type: 'json_object' }, maxOutputTokens: 64 })
  })

  test('built-in tools, uploaded files, item references and background mode are refused by field', () => {
    expect(refused(responses({ input: 'hi', tools: [{ type: 'web_search' }] })).details.param).toBe(
      'tools[0]',
    )
    expect(
      refused(
        responses({
          input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file_1' }] }],
        }),
      ).details.param,
    ).toBe('input[0].content[0].file_data')
    expect(
      refused(responses({ input: [{ type: 'item_reference', id: 'msg_1' }] })).details.param,
    ).toBe('input[0].type')
    expect(refused(responses({ input: 'hi', background: true })).details.param).toBe('background')
  })

  test('a file given as a data URL becomes a file with its media type and name', () => {
    const result = ok(
      responses({
        input: [
          {
            role: 'user',
            content: [
              {
                type: 'input_file',
                filename: 'notes.txt',
                file_data: 'data:text/plain;base64,aGVsbG8=',
              },
            ],
          },
        ],
      }),
    )
    expect(result.turns).toEqual([
      {
        role: 'user',
        content: [
          { type: 'file', mediaType: 'text/plain', data: 'aGVsbG8=', filename: 'notes.txt' },
        ],
      },
    ])
  })

  test('allowed tools keep their names and mode; another kind of allowed tool is refused by field', () => {
    const choice = (tools: unknown[]) =>
      responses({ input: 'hi', tool_choice: { type: 'allowed_tools', mode: 'auto', tools } })
    expect(ok(choice([{ type: 'function', name: 'look' }])).toolChoice).toEqual({
      allowed: ['look'],
      mode: 'auto',
    })
    expect(refused(choice([{ type: 'web_search' }])).details.param).toBe('tool_choice.tools')
  })

  test('a part or a function tool missing what it is made of is refused naming that field', () => {
    const part = (content: Record<string, unknown>) =>
      refused(responses({ input: [{ role: 'user', content: [content] }] }))
    expect(part({ type: 'input_text' })).toMatchObject({
      message: 'input[0].content[0].text: is required',
      details: { param: 'input[0].content[0].text' },
    })
    expect(part({ type: 'input_image', file_id: 'file_1' }).details.param).toBe(
      'input[0].content[0].image_url',
    )
    expect(
      refused(responses({ input: 'hi', tools: [{ type: 'function', parameters: {} }] })),
    ).toMatchObject({ message: 'tools[0].name: is required', details: { param: 'tools[0].name' } })
  })
})
