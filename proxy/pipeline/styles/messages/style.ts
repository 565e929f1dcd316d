/**
 * The Messages client style (`/v1/messages`), native to Anthropic-style providers. The key may come as
 * `x-api-key` or as a bearer token; any `anthropic-version` is accepted (SDK majors send different dates).
 * A provider of the style receives the client's `anthropic-beta` as sent. Threads are kept by the
 * style as threads.ts adds them.
 */
import { ServiceError } from '../../../../shared/errors.ts'
import { MessagesRequest, messagesRequestFields } from '../../../../shared/schemas/messages.ts'
import { envelope } from '../../validate.ts'
import { setDefault } from '../../../policy/routing/presets.ts'
import type { ClientStyle } from '../client-style.ts'
import { messagesPassthroughAnswer, renderMessagesAnswer } from './answer.ts'
import { messagesPassthroughBody } from './passthrough-body.ts'
import { measureMessagesPrompt } from './prompt.ts'
import { messagesErrorBody } from './render-error.ts'
import { messagesPassthroughStream, messagesStreamOutput } from './stream.ts'
import { messagesTexts, messagesUsesTools } from './texts.ts'
import { providerBetas, threadRefusal } from './thread-field.ts'
import { messagesConversation } from './to-conversation.ts'

const messagesEnvelope = envelope<MessagesRequest>(
  MessagesRequest,
  messagesRequestFields,
  (body) => {
    const thread = threadRefusal(body.thread)
    if (thread) return thread
    // A continue may send none: after a pause_turn reply the thread resumes the unfinished turn.
    if (body.messages.length === 0 && body.thread?.type !== 'continue')
      return new ServiceError('invalid_request', 'messages: must be a non-empty array', {
        param: 'messages',
      })
    const index = body.messages.findIndex(
      (message) => Array.isArray(message.content) && message.content.length === 0,
    )
    if (index >= 0)
      return new ServiceError('invalid_request', `messages[${index}].content: must not be empty`, {
        param: `messages[${index}].content`,
      })
    return undefined
  },
  (field) => `${field}: Extra inputs are not permitted`,
)

export const messagesStyle: ClientStyle<MessagesRequest> = {
  name: 'messages',
  envelope: messagesEnvelope,
  allowXApiKey: true,
  errorBody: messagesErrorBody,
  headers: (requestId) => ({ 'request-id': requestId }),
  requested: (body) => ({
    model: body.model,
    fallbacks: body.fallbacks ?? [],
    stream: body.stream === true,
    outputTokens: body.max_tokens,
  }),
  fallbacksField: 'fallbacks',
  outputLimitField: 'max_tokens',
  // max_tokens is required in this style, so a preset's never applies.
  // The style's temperature runs from 0 to 1, and its providers take temperature or top_p, not both: a
  // preset's sampling applies only to a request that sets neither, its temperature capped at 1. With
  // thinking on, the providers refuse a temperature other than 1 and a top_p below 0.95, so none applies.
  applyDefaults(body, params) {
    const sampling = body as {
      temperature?: unknown
      top_p?: unknown
      thinking?: { type?: unknown }
    }
    const thinking = sampling.thinking != null && sampling.thinking.type !== 'disabled'
    if (!thinking && sampling.temperature == null && sampling.top_p == null) {
      if (params.temperature !== undefined)
        setDefault(body, 'temperature', Math.min(1, params.temperature))
      else setDefault(body, 'top_p', params.top_p)
    }
    setDefault(body, 'stop_sequences', params.stop)
  },
  usesTools: messagesUsesTools,
  texts: messagesTexts,
  measure: measureMessagesPrompt,
  conversation: messagesConversation,
  renderAnswer: renderMessagesAnswer,
  streamOutput: messagesStreamOutput,
  passthrough: {
    provider: 'anthropic',
    // Beta features the client opted into (fields such as mcp_servers and context_management need them).
    headers: ['anthropic-beta'],
    // Threads are the gateway's: the provider is sent whole conversations.
    headerValue: (_name, value) => providerBetas(value),
    body: messagesPassthroughBody,
    answer: messagesPassthroughAnswer,
    stream: messagesPassthroughStream,
  },
}
