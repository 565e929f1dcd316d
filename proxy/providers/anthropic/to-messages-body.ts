/**
 * A neutral conversation as a Messages request body. System text moves to the top-level `system`; tool
 * results become `tool_result` blocks opening the next user message (ahead of user text that came before
 * them); consecutive turns of one role merge, since the style alternates user and assistant; a message
 * without content is left out, and system text alone becomes the user message. Fields the style rejects are mapped or left out:
 * temperature is capped at 1 (and `top_p` goes only without it), `stop` becomes `stop_sequences`, a
 * JSON response format becomes a system instruction, `user` becomes `metadata.user_id`; `seed` has no
 * equivalent. Tool-call IDs the style would reject are made valid the same way on the call and its result.
 */
import { createHash } from 'node:crypto'
import { ServiceError } from '../../../shared/errors.ts'
import { isTextMediaType } from '../../core/texts.ts'
import type { ContentPart, Conversation, FilePart, Turn } from '../../core/neutral/conversation.ts'

type Block = Record<string, unknown>
type Message = { role: 'user' | 'assistant'; content: Block[] }

const imageTypes = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp'])

export function conversationToMessages(
  conversation: Conversation,
  model: string,
  maxTokens: number,
): Record<string, unknown> | ServiceError {
  const system: string[] = []
  const messages: Message[] = []
  const append = (role: Message['role'], blocks: Block[]) => {
    const last = messages.at(-1)
    if (last?.role !== role) messages.push({ role, content: blocks })
    else if (blocks[0]?.type === 'tool_result') {
      // The style wants a user message's tool results before anything else in it: results that come
      // after user text (a Responses user item placed before the function outputs) open the message.
      const firstOther = last.content.findIndex((block) => block.type !== 'tool_result')
      last.content.splice(firstOther < 0 ? last.content.length : firstOther, 0, ...blocks)
    } else last.content.push(...blocks)
  }
  for (const turn of conversation.turns) {
    const blocks = turnBlocks(turn)
    if (blocks instanceof ServiceError) return blocks
    if (turn.role === 'system') system.push(turn.text)
    // The style refuses a message without content; an empty one says nothing to the model either.
    else if (blocks.length > 0) append(turn.role === 'assistant' ? 'assistant' : 'user', blocks)
  }
  if (messages.length === 0) {
    // The style needs a message beside the system prompt; instructions alone are what the model is asked.
    if (system.length === 0)
      return new ServiceError(
        'invalid_request',
        "The messages have no content: this model's provider needs at least one message with text, an image or a tool call.",
        { param: 'messages' },
      )
    messages.push({ role: 'user', content: [{ type: 'text', text: system.splice(0).join('\n') }] })
  }
  const format = conversation.responseFormat
  if (format?.type === 'json_object')
    system.push('Respond with a single JSON object and nothing else.')
  if (format?.type === 'json_schema')
    system.push(
      `Respond with a single JSON object that matches this JSON Schema, and nothing else:\n${JSON.stringify(format.schema)}`,
    )

  const body: Record<string, unknown> = {
    model,
    max_tokens: conversation.maxOutputTokens ?? maxTokens,
    messages,
  }
  if (system.length > 0) body.system = system.join('\n')
  const choice = conversation.toolChoice
  // The style has no list of allowed tools among those offered: only the allowed ones are offered.
  const allowed = typeof choice === 'object' && 'allowed' in choice ? choice : undefined
  const tools = allowed
    ? conversation.tools.filter((tool) => allowed.allowed.includes(tool.name))
    : conversation.tools
  if (tools.length > 0) {
    body.tools = tools.map((tool) => ({
      name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      input_schema: { type: 'object', properties: {}, ...tool.parameters },
    }))
    const disable =
      conversation.parallelToolCalls === false ? { disable_parallel_tool_use: true } : {}
    if (choice === 'required' || allowed?.mode === 'required')
      body.tool_choice = { type: 'any', ...disable }
    else if (choice === 'none') body.tool_choice = { type: 'none' }
    else if (typeof choice === 'object' && 'name' in choice)
      body.tool_choice = { type: 'tool', name: choice.name, ...disable }
    else if (choice === 'auto' || conversation.parallelToolCalls === false)
      body.tool_choice = { type: 'auto', ...disable }
  }
  if (conversation.temperature !== undefined)
    body.temperature = Math.min(1, conversation.temperature)
  // The style's current models refuse temperature and top_p together (400, "use only one"), as every
  // model's guidance is to set one of them: temperature is kept, top_p goes only alone.
  else if (conversation.topP !== undefined) body.top_p = conversation.topP
  if (conversation.topK !== undefined) body.top_k = conversation.topK
  if (conversation.stop.length > 0) body.stop_sequences = conversation.stop
  if (conversation.user !== undefined) body.metadata = { user_id: conversation.user }
  if (conversation.stream) body.stream = true
  return body
}

function turnBlocks(turn: Turn): Block[] | ServiceError {
  switch (turn.role) {
    case 'system':
      return []
    case 'user':
      return contentBlocks(turn.content)
    case 'assistant': {
      const blocks: Block[] = turn.text ? [{ type: 'text', text: turn.text }] : []
      for (const call of turn.toolCalls) {
        const input = parseArguments(call.arguments)
        if (input instanceof ServiceError) return input
        blocks.push({ type: 'tool_use', id: toolUseId(call.id), name: call.name, input })
      }
      return blocks
    }
    case 'tool': {
      const content = contentBlocks(turn.content)
      if (content instanceof ServiceError) return content
      return [
        {
          type: 'tool_result',
          tool_use_id: toolUseId(turn.toolCallId),
          content,
          ...(turn.isError ? { is_error: true } : {}),
        },
      ]
    }
  }
}

function contentBlocks(parts: ContentPart[]): Block[] | ServiceError {
  const blocks: Block[] = []
  for (const part of parts) {
    if (part.type === 'text') {
      if (part.text !== '') blocks.push({ type: 'text', text: part.text })
      continue
    }
    if (part.type === 'file') {
      const document = documentBlock(part)
      if (document instanceof ServiceError) return document
      blocks.push(document)
      continue
    }
    const data = /^data:([^;,]+);base64,(.*)$/s.exec(part.url)
    if (!data) {
      blocks.push({ type: 'image', source: { type: 'url', url: part.url } })
      continue
    }
    // Media types are case-insensitive; the style accepts only the lowercase names, and only `jpeg` of
    // the names JPEG goes by (`image/jpg` is common in data URLs, and other providers take it).
    const lower = data[1]!.toLowerCase()
    const mediaType = lower === 'image/jpg' || lower === 'image/pjpeg' ? 'image/jpeg' : lower
    if (!imageTypes.has(mediaType)) {
      return new ServiceError(
        'invalid_request',
        `Images of type ${data[1]} are not supported by this model's provider (jpeg, png, gif or webp).`,
      )
    }
    blocks.push({ type: 'image', source: { type: 'base64', media_type: mediaType, data: data[2] } })
  }
  return blocks
}

/**
 * A file as the style's document: a PDF as it came (base64), a file of a text type (plain text, Markdown,
 * JSON…) as plain text; the file's name is the document's title. The style takes no other kind of file.
 */
function documentBlock(file: FilePart): Block | ServiceError {
  const title = file.filename ? { title: file.filename } : {}
  if (file.mediaType === 'application/pdf')
    return {
      type: 'document',
      source: { type: 'base64', media_type: 'application/pdf', data: file.data },
      ...title,
    }
  if (isTextMediaType(file.mediaType))
    return {
      type: 'document',
      source: {
        type: 'text',
        media_type: 'text/plain',
        data: Buffer.from(file.data, 'base64').toString('utf8'),
      },
      ...title,
    }
  return new ServiceError(
    'invalid_request',
    `Files of type ${file.mediaType} are not supported by this model's provider (PDF or text).`,
  )
}

/**
 * The style takes tool-use IDs of letters, digits, `_` and `-` only; other styles' IDs (such as
 * `functions.get_weather:0`) have their other characters replaced and a hash of the whole ID appended,
 * so a call and its result still match and two IDs never become one. Valid IDs are kept.
 */
export function toolUseId(id: string): string {
  if (/^[a-zA-Z0-9_-]+$/.test(id)) return id
  const hash = createHash('sha256').update(id).digest('hex').slice(0, 12)
  return `${id.replace(/[^a-zA-Z0-9_-]/g, '_')}_${hash}`
}

/** Tool-call arguments are a JSON object in text; this style wants the object. */
function parseArguments(text: string): Record<string, unknown> | ServiceError {
  if (text.trim() === '') return {}
  try {
    const value = JSON.parse(text) as unknown
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      return value as Record<string, unknown>
  } catch {
    // fall through
  }
  return new ServiceError(
    'invalid_request',
    'A tool call in the conversation has arguments that are not a JSON object.',
  )
}
