// Every text a request sends for the model to read, in each client style, reaches the guardrail's
// visitor, and a replacement lands where the text stands; what is not text (names, types, IDs) is left.
import { describe, expect, test } from 'bun:test'
import type { ChatRequest } from '../../../../shared/schemas/chat.ts'
import type { MessagesRequest } from '../../../../shared/schemas/messages.ts'
import type { ResponsesRequest } from '../../../../shared/schemas/responses.ts'
import type { TextVisitor } from '../../../../proxy/core/texts.ts'
import { chatTexts } from '../../../../proxy/pipeline/styles/chat/texts.ts'
import { messagesTexts } from '../../../../proxy/pipeline/styles/messages/texts.ts'
import { responsesTexts, turnTexts } from '../../../../proxy/pipeline/styles/responses/texts.ts'
import type { Turn } from '../../../../proxy/core/neutral/conversation.ts'

/** Each visited text marked, so the rewritten body shows every place a text was read. */
function mark<Body>(texts: (body: Body, visit: TextVisitor) => void, body: Body) {
  const seen: string[] = []
  texts(body, (text) => {
    seen.push(text)
    return `<${text}>`
  })
  return { seen, body }
}

/** A JSON Schema with texts at depth, and a property named like a keyword. */
const schema = () => ({
  type: 'object',
  title: 'schema title',
  description: 'schema description',
  properties: {
    description: { type: 'string', description: 'property description' },
    unit: { type: 'string', enum: ['enum value'], default: 'default value' },
    nested: { type: 'array', items: { type: 'string', examples: ['example value'] } },
  },
  required: ['description'],
})
const schemaTexts = [
  'schema title',
  'schema description',
  'property description',
  'enum value',
  'default value',
  'example value',
]

describe('Messages texts', () => {
  test('documents, search results and tool definitions, beside text, tool uses and tool results', () => {
    const { seen, body } = mark(messagesTexts, {
      model: 'a/b',
      max_tokens: 10,
      system: [{ type: 'text', text: 'system text' }],
      tools: [
        {
          name: 'look',
          description: 'tool description',
          input_schema: schema(),
          input_examples: [{ unit: 'input example' }],
        },
      ],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'user text' },
            {
              type: 'document',
              title: 'document title',
              context: 'document context',
              source: { type: 'text', media_type: 'text/plain', data: 'document data' },
            },
            {
              type: 'document',
              source: { type: 'content', content: [{ type: 'text', text: 'content block' }] },
            },
            { type: 'document', source: { type: 'content', content: 'content string' } },
            {
              type: 'search_result',
              source: 'https://example.com/result',
              title: 'result title',
              content: [{ type: 'text', text: 'result text' }],
            },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'signed thinking', signature: 'sig' },
            { type: 'tool_use', id: 't1', name: 'look', input: { query: 'tool input' } },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 't1',
              content: [
                {
                  type: 'search_result',
                  source: 'doc-2',
                  title: 'nested title',
                  content: [{ type: 'text', text: 'nested text' }],
                },
              ],
            },
          ],
        },
      ],
    } as unknown as MessagesRequest)
    expect(seen.sort()).toEqual(
      [
        'system text',
        'user text',
        'document title',
        'document context',
        'document data',
        'content block',
        'content string',
        'https://example.com/result',
        'result title',
        'result text',
        'tool input',
        'nested title',
        'doc-2',
        'nested text',
        'tool description',
        'input example',
        ...schemaTexts,
      ].sort(),
    )
    const [user, assistant] = body.messages as { content: Record<string, unknown>[] }[]
    expect(user!.content[1]).toMatchObject({
      title: '<document title>',
      context: '<document context>',
      source: { type: 'text', media_type: 'text/plain', data: '<document data>' },
    })
    expect(assistant!.content[0]).toEqual({
      type: 'thinking',
      thinking: 'signed thinking',
      signature: 'sig',
    })
    const tool = body.tools![0] as unknown as { description: string; input_schema: unknown }
    expect(tool.description).toBe('<tool description>')
    expect(tool.input_schema).toMatchObject({
      type: 'object',
      properties: {
        description: { type: 'string', description: '<property description>' },
        unit: { enum: ['<enum value>'] },
      },
      required: ['description'],
    })
  })
})

describe('Chat Completions texts', () => {
  test('tools, legacy functions, refusals, inline text files, response format and prediction', () => {
    const text = (value: string) => Buffer.from(value).toString('base64')
    const { seen, body } = mark(chatTexts, {
      model: 'a/b',
      messages: [
        { role: 'system', content: 'system text' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'user text' },
            {
              type: 'file',
              file: {
                filename: 'notes.txt',
                file_data: `data:text/plain;base64,${text('file text')}`,
              },
            },
            {
              type: 'file',
              file: { filename: 'paper.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' },
            },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
          ],
        },
        {
          role: 'assistant',
          content: [{ type: 'refusal', refusal: 'refusal part' }],
          refusal: 'refusal field',
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'tool output' },
      ],
      tools: [
        {
          type: 'function',
          function: { name: 'f', description: 'tool description', parameters: schema() },
        },
        { type: 'custom', custom: { name: 'c', description: 'custom description' } },
      ],
      functions: [{ name: 'g', description: 'function description' }],
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'r', description: 'format description', schema: { type: 'object' } },
      },
      prediction: { type: 'content', content: 'predicted text' },
    } as unknown as ChatRequest)
    expect(seen.sort()).toEqual(
      [
        'system text',
        'user text',
        'notes.txt',
        'file text',
        'paper.pdf',
        'refusal part',
        'refusal field',
        '{}',
        'tool output',
        'tool description',
        'custom description',
        'function description',
        'format description',
        'predicted text',
        ...schemaTexts,
      ].sort(),
    )
    const files = (body.messages[1]!.content as { file?: Record<string, string> }[]).slice(1, 3)
    expect(files[0]!.file!.file_data).toBe(`data:text/plain;base64,${text('<file text>')}`)
    expect(files[1]!.file!).toEqual({
      filename: '<paper.pdf>',
      file_data: 'data:application/pdf;base64,JVBERi0=',
    })
  })
})

describe('Responses texts', () => {
  test('tool descriptions and schemas, the output format and refusals, beside input and outputs', () => {
    const { seen, body } = mark(responsesTexts, {
      model: 'a/b',
      instructions: 'instructions',
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'user text' }] },
        { role: 'assistant', content: [{ type: 'refusal', refusal: 'refusal part' }] },
        { type: 'function_call', call_id: 'f1', name: 'f', arguments: '{"a":1}' },
        { type: 'function_call_output', call_id: 'f1', output: 'tool output' },
      ],
      tools: [
        { type: 'function', name: 'f', description: 'tool description', parameters: schema() },
      ],
      text: {
        format: {
          type: 'json_schema',
          name: 'r',
          description: 'format description',
          schema: { type: 'object', properties: { a: { type: 'string', description: 'field' } } },
        },
      },
    } as unknown as ResponsesRequest)
    expect(seen.sort()).toEqual(
      [
        'instructions',
        'user text',
        'refusal part',
        '{"a":1}',
        'tool output',
        'tool description',
        'format description',
        'field',
        ...schemaTexts,
      ].sort(),
    )
    expect((body.tools![0] as { description?: string }).description).toBe('<tool description>')
  })

  test('an inline text file is read as its text, with its name; a PDF only by its name', () => {
    const text = (value: string) => Buffer.from(value).toString('base64')
    const { seen, body } = mark(responsesTexts, {
      model: 'a/b',
      input: [
        {
          role: 'user',
          content: [
            {
              type: 'input_file',
              filename: 'notes.md',
              file_data: `data:text/markdown;base64,${text('file text')}`,
            },
            {
              type: 'input_file',
              filename: 'paper.pdf',
              file_data: 'data:application/pdf;base64,JVBERi0=',
            },
          ],
        },
      ],
    } as unknown as ResponsesRequest)
    expect(seen).toEqual(['notes.md', 'file text', 'paper.pdf'])
    const files = (body.input as { content: Record<string, string>[] }[])[0]!.content
    expect(files[0]!.file_data).toBe(`data:text/markdown;base64,${text('<file text>')}`)
    expect(files[1]!.file_data).toBe('data:application/pdf;base64,JVBERi0=')
  })

  test("a stored conversation's text files are read as their text", () => {
    const turns: Turn[] = [
      {
        role: 'user',
        content: [
          { type: 'file', mediaType: 'text/plain', data: Buffer.from('kept').toString('base64') },
          { type: 'file', mediaType: 'application/pdf', data: 'JVBERi0=', filename: 'a.pdf' },
        ],
      },
    ]
    const { seen } = mark(turnTexts, turns)
    expect(seen).toEqual(['kept', 'a.pdf'])
    expect(turns[0]).toMatchObject({
      content: [{ data: Buffer.from('<kept>').toString('base64') }, { data: 'JVBERi0=' }],
    })
  })
})
