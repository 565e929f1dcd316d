/**
 * A neutral conversation as a Chat Completions request body, for OpenAI-compatible providers. Tool
 * results become `tool` messages, which take text only: the images of a result follow the results in a
 * user message that names the call. More stop sequences than the style takes are refused, not cut. A
 * reasoning effort goes to a model the catalog says takes one, or does not say (`reasoning`).
 */
import { ServiceError } from '../../../shared/errors.ts'
import type { ContentPart, Conversation, FilePart, Turn } from '../../core/neutral/conversation.ts'
import { defaultFilename, fileDataUrl } from '../../core/neutral/conversation.ts'
import { isTextMediaType } from '../../core/texts.ts'

/** The most `stop` strings a Chat Completions request may carry. */
const MAX_STOP_SEQUENCES = 4

/** A thinking budget below this many tokens asks for `low` effort, below `HIGH_EFFORT_BUDGET` for `medium`. */
const MEDIUM_EFFORT_BUDGET = 8_192
const HIGH_EFFORT_BUDGET = 24_576

/**
 * The effort a reasoning model is asked for: the client's own, or one its thinking budget maps to, where
 * the catalog says the model takes an effort (`reasoning`); none for a model that takes none.
 */
function reasoningEffort(conversation: Conversation, reasoning: boolean | undefined) {
  if (reasoning === false) return undefined
  if (conversation.reasoningEffort !== undefined) return conversation.reasoningEffort
  const budget = conversation.thinkingBudget
  if (reasoning !== true || budget === undefined) return undefined
  return budget < MEDIUM_EFFORT_BUDGET ? 'low' : budget < HIGH_EFFORT_BUDGET ? 'medium' : 'high'
}

export function conversationToChat(
  conversation: Conversation,
  model: string,
  reasoning?: boolean,
): Record<string, unknown> | ServiceError {
  // Only a Messages client's `stop_sequences` reach this encoder with more than one stop string.
  if (conversation.stop.length > MAX_STOP_SEQUENCES)
    return new ServiceError(
      'invalid_request',
      `stop_sequences: at most ${MAX_STOP_SEQUENCES} with this model's provider; this request has ${conversation.stop.length}`,
      { param: 'stop_sequences' },
    )
  const body: Record<string, unknown> = { model, messages: chatMessages(conversation.turns) }
  if (conversation.tools.length > 0) {
    body.tools = conversation.tools.map((tool) => ({
      type: 'function',
      function: {
        name: tool.name,
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        parameters: tool.parameters,
        ...(tool.strict !== undefined ? { strict: tool.strict } : {}),
      },
    }))
  }
  const choice = conversation.toolChoice
  // The style refuses a tool_choice without tools; auto and none say nothing then, so they go unsent.
  const unsaid = (choice === 'auto' || choice === 'none') && conversation.tools.length === 0
  if (choice && !unsaid)
    body.tool_choice =
      typeof choice === 'string'
        ? choice
        : 'allowed' in choice
          ? {
              type: 'allowed_tools',
              allowed_tools: {
                mode: choice.mode,
                tools: choice.allowed.map((name) => ({ type: 'function', function: { name } })),
              },
            }
          : { type: 'function', function: { name: choice.name } }
  if (conversation.parallelToolCalls !== undefined && conversation.tools.length > 0)
    body.parallel_tool_calls = conversation.parallelToolCalls
  if (conversation.maxOutputTokens !== undefined)
    body.max_completion_tokens = conversation.maxOutputTokens
  if (conversation.temperature !== undefined) body.temperature = conversation.temperature
  if (conversation.topP !== undefined) body.top_p = conversation.topP
  if (conversation.stop.length > 0) body.stop = conversation.stop
  if (conversation.seed !== undefined) body.seed = conversation.seed
  if (conversation.user !== undefined) body.user = conversation.user
  const effort = reasoningEffort(conversation, reasoning)
  if (effort !== undefined) body.reasoning_effort = effort
  const format = conversation.responseFormat
  if (format?.type === 'json_object') body.response_format = { type: 'json_object' }
  if (format?.type === 'json_schema') {
    body.response_format = {
      type: 'json_schema',
      json_schema: {
        name: format.name,
        schema: format.schema,
        ...(format.strict !== undefined ? { strict: format.strict } : {}),
      },
    }
  }
  if (conversation.stream) {
    body.stream = true
    body.stream_options = { include_usage: true }
  }
  return body
}

/**
 * The turns as messages. The style wants an assistant's tool calls answered by the tool messages right
 * after it: system and user text that comes between them (a Messages client's system message, a
 * Responses developer or user item placed before the function outputs) and the images of the results
 * are sent once the calls are answered, or before the next turn that is neither a result nor such text.
 */
function chatMessages(turns: Turn[]): Record<string, unknown>[] {
  const messages: Record<string, unknown>[] = []
  const unanswered = new Set<string>()
  let held: Record<string, unknown>[] = []
  const release = () => {
    messages.push(...held)
    held = []
  }
  for (const turn of turns) {
    if ((turn.role === 'system' || turn.role === 'user') && unanswered.size > 0) {
      held.push(chatMessage(turn))
      continue
    }
    if (turn.role === 'tool') unanswered.delete(turn.toolCallId)
    else {
      unanswered.clear()
      release()
    }
    messages.push(chatMessage(turn))
    if (turn.role === 'tool') held.push(...resultAttachments(turn))
    if (turn.role === 'assistant') for (const call of turn.toolCalls) unanswered.add(call.id)
    if (unanswered.size === 0) release()
  }
  release()
  return messages
}

function chatMessage(turn: Turn): Record<string, unknown> {
  switch (turn.role) {
    case 'system':
      return { role: 'system', content: turn.text }
    case 'user':
      return { role: 'user', content: userContent(turn.content) }
    case 'assistant':
      return {
        role: 'assistant',
        content: turn.text === '' && turn.toolCalls.length > 0 ? null : turn.text,
        ...(turn.toolCalls.length > 0
          ? {
              tool_calls: turn.toolCalls.map((call) => ({
                id: call.id,
                type: 'function',
                function: { name: call.name, arguments: call.arguments },
              })),
            }
          : {}),
      }
    case 'tool':
      return {
        role: 'tool',
        tool_call_id: turn.toolCallId,
        content: `${turn.isError ? '[error] ' : ''}${resultText(turn.content)}`,
      }
  }
}

/** Images and files other than text, which a tool message cannot carry: they follow in a user message. */
const attached = (part: ContentPart) =>
  part.type === 'image' || (part.type === 'file' && !isTextMediaType(part.mediaType))

/** A tool result's text (a text file's included), each attachment marked where it was. */
function resultText(parts: ContentPart[]): string {
  const seen = { image: 0, file: 0 }
  return parts
    .map((part) => {
      if (part.type === 'text') return part.text
      if (!attached(part)) return fileText(part as FilePart)
      return `[${part.type} ${++seen[part.type]} of this result follows]`
    })
    .join('')
}

/** The user message that carries a tool result's attachments (none when it has none). */
function resultAttachments(turn: Extract<Turn, { role: 'tool' }>): Record<string, unknown>[] {
  const attachments = turn.content.filter(attached)
  if (attachments.length === 0) return []
  const images = attachments.some((part) => part.type === 'image')
  const files = attachments.some((part) => part.type === 'file')
  const what = images && files ? 'Images and files' : images ? 'Images' : 'Files'
  return [
    {
      role: 'user',
      content: userContent([
        { type: 'text', text: `${what} of the result of tool call ${turn.toolCallId}:` },
        ...attachments,
      ]),
    },
  ]
}

/** A text file's content, after its name when it has one, as a Messages document's title comes first. */
function fileText(file: FilePart): string {
  const text = Buffer.from(file.data, 'base64').toString('utf8')
  return file.filename ? `${file.filename}\n\n${text}` : text
}

function userContent(parts: ContentPart[]): string | Record<string, unknown>[] {
  if (parts.length === 1 && parts[0]!.type === 'text') return parts[0]!.text
  return parts.map((part) => {
    switch (part.type) {
      case 'text':
        return { type: 'text', text: part.text }
      case 'image':
        return {
          type: 'image_url',
          image_url: { url: part.url, ...(part.detail ? { detail: part.detail } : {}) },
        }
      case 'file':
        // A file of a text type is read as text (the style's file part is for PDFs); any other goes
        // as the style's file part, its data a data URL, with the file's name.
        if (isTextMediaType(part.mediaType)) return { type: 'text', text: fileText(part) }
        return {
          type: 'file',
          file: { filename: part.filename ?? defaultFilename(part), file_data: fileDataUrl(part) },
        }
    }
  })
}
