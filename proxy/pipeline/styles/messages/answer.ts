/** Non-streaming Messages answers: from a provider of another style, or passed through with the cost added. */
import type { MessagesRequest } from '../../../../shared/schemas/messages.ts'
import { stopReasonFromFinish } from '../../../providers/anthropic/stop-reason.ts'
import { toolUseId } from '../../../providers/anthropic/to-messages-body.ts'
import type { Answer, FinishReason } from '../../../core/neutral/answer.ts'
import type { AnswerContext, Charged } from '../client-style.ts'
import { messagesUsage } from './usage.ts'

export function messageId(requestId: string): string {
  return `msg_${requestId.slice(4)}`
}

export function toolInput(text: string): unknown {
  try {
    return text.trim() === '' ? {} : JSON.parse(text)
  } catch {
    return {}
  }
}

/**
 * The `stop_reason` of an answer: an answer the provider refused (an OpenAI-style `refusal`) ends as the
 * style's own `refusal` where it would otherwise be a plain `end_turn`.
 */
export function messagesStopReason(finish: FinishReason, refused: boolean): string {
  return refused && finish === 'stop' ? 'refusal' : stopReasonFromFinish(finish)
}

export function renderMessagesAnswer(
  answer: Answer,
  charged: Charged,
  context: AnswerContext<MessagesRequest>,
): Record<string, unknown> {
  return {
    id: messageId(context.requestId),
    type: 'message',
    role: 'assistant',
    model: answer.model || context.modelId,
    content: answer.parts.map((part) =>
      part.type === 'text'
        ? { type: 'text', text: part.text }
        : {
            type: 'tool_use',
            // Another style's provider may name calls outside this style's alphabet.
            id: toolUseId(part.id),
            name: part.name,
            input: toolInput(part.arguments),
          },
    ),
    stop_reason: messagesStopReason(
      answer.finish,
      answer.parts.some((part) => part.type === 'text' && part.refusal === true),
    ),
    stop_sequence: answer.stopSequence,
    usage: messagesUsage(charged.usage, charged.costUsd),
  }
}

export function messagesPassthroughAnswer(
  json: Record<string, unknown>,
  charged: Charged,
): Record<string, unknown> {
  const reported =
    typeof json.usage === 'object' && json.usage !== null
      ? (json.usage as Record<string, unknown>)
      : messagesUsage(charged.usage, charged.costUsd)
  json.usage = { ...reported, cost: charged.costUsd }
  return json
}
