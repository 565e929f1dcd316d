/**
 * A neutral conversation as a Chat Completions request body, for OpenAI-compatible providers. Tool
 * results become `tool` messages (text only: images in tool results have no place in this style).
 * More stop sequences than the style takes are refused, not cut.
 */
import { ServiceError } from '../../../shared/errors.ts'
import type { ContentPart, Conversation, Turn } from '../../core/neutral/conversation.ts'
import { partsText } from '../../core/neutral/conversation.ts'

/** The most `stop` strings a Chat Completions request may carry. */
const MAX_STOP_SEQUENCES = 4

export function conversationToChat(
  conversation: Conversation,
  model: string,
): Record<string, unknown> | ServiceError {
  // Only a Messages client's `stop_sequences` reach this encoder with more than one stop string.
  if (conversation.stop.length > MAX_STOP_SEQUENCES)
    return new ServiceError(
      'invalid_request',
      `stop_sequences: at most ${MAX_STOP_SEQUENCES} with this model's provider; this request has ${conversation.stop.length}`,
      { param: 'stop_sequences' },
    )
  const body: Record<string, unknown> = { model, messages: conversation.turns.map(chatMessage) }
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
  if (choice)
    body.tool_choice =
      typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } }
  if (conversation.parallelToolCalls !== undefined && conversation.tools.length > 0)
    body.parallel_tool_calls = conversation.parallelToolCalls
  if (conversation.maxOutputTokens !== undefined)
    body.max_completion_tokens = conversation.maxOutputTokens
  if (conversation.temperature !== undefined) body.temperature = conversation.temperature
  if (conversation.topP !== undefined) body.top_p = conversation.topP
  if (conversation.stop.length > 0) body.stop = conversation.stop
  if (conversation.seed !== undefined) body.seed = conversation.seed
  if (conversation.user !== undefined) body.user = conversation.user
  if (conversation.reasoningEffort !== undefined)
    body.reasoning_effort = conversation.reasoningEffort
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
        content: `${turn.isError ? '[error] ' : ''}${partsText(turn.content)}`,
      }
  }
}

function userContent(parts: ContentPart[]): string | Record<string, unknown>[] {
  if (parts.length === 1 && parts[0]!.type === 'text') return parts[0]!.text
  return parts.map((part) =>
    part.type === 'text'
      ? { type: 'text', text: part.text }
      : {
          type: 'image_url',
          image_url: { url: part.url, ...(part.detail ? { detail: part.detail } : {}) },
        },
  )
}
