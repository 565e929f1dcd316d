/** Non-streaming Chat Completions answers: from a provider of another style, or passed through with the cost added. */
import type { ChatRequest } from '../../../../shared/schemas/chat.ts'
import type { Answer, FinishReason } from '../../../core/neutral/answer.ts'
import type { AnswerContext, Charged } from '../client-style.ts'
import { legacyFinishReason, usesLegacyFunctions } from './legacy-functions.ts'
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
  const legacy = usesLegacyFunctions(context.body)
  const calls =
    toolCalls.length === 0
      ? {}
      : legacy
        ? { function_call: toolCalls[0]!.function }
        : { tool_calls: toolCalls }
  const finish = chatFinishReason(answer.finish)
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
          ...calls,
        },
        logprobs: null,
        finish_reason: legacy ? legacyFinishReason(finish) : finish,
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
