/** Non-streaming Chat Completions answers: from a provider of another style, or passed through with the cost added. */
import type { ChatRequest } from '../../../../shared/schemas/chat.ts'
import type { Answer, FinishReason } from '../../../core/neutral/answer.ts'
import type { AnswerContext, Charged } from '../client-style.ts'
import { chatUsage } from './usage.ts'

export function chatFinishReason(finish: FinishReason): string {
  return finish === 'stop_sequence' ? 'stop' : finish
}

export function chatId(requestId: string): string {
  return `chatcmpl-${requestId.slice(4)}`
}

export function renderChatAnswer(
  answer: Answer,
  charged: Charged,
  context: AnswerContext<ChatRequest>,
): Record<string, unknown> {
  const text = answer.parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('')
  const toolCalls = answer.parts.flatMap((part) =>
    part.type === 'tool_call'
      ? [
          {
            id: part.id,
            type: 'function',
            function: { name: part.name, arguments: part.arguments },
          },
        ]
      : [],
  )
  return {
    id: chatId(context.requestId),
    object: 'chat.completion',
    created: context.created,
    model: answer.model || context.modelId,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text === '' && toolCalls.length > 0 ? null : text,
          refusal: null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: chatFinishReason(answer.finish),
      },
    ],
    usage: chatUsage(charged.usage, charged.costUsd),
  }
}

export function chatPassthroughAnswer(
  json: Record<string, unknown>,
  charged: Charged,
): Record<string, unknown> {
  const reported =
    typeof json.usage === 'object' && json.usage !== null
      ? (json.usage as Record<string, unknown>)
      : chatUsage(charged.usage, charged.costUsd)
  json.usage = { ...reported, cost: charged.costUsd }
  return json
}
