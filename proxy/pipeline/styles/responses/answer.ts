/** Non-streaming Responses answers, translated from the provider's answer. */
import type { ResponsesRequest } from '../../../../shared/schemas/responses.ts'
import type { Answer } from '../../../core/neutral/answer.ts'
import type { AnswerContext, Charged } from '../client-style.ts'
import { finalStatus, outputItems, responseObject, responsesUsage } from './output.ts'

export function renderResponsesAnswer(
  answer: Answer,
  charged: Charged,
  context: AnswerContext<ResponsesRequest>,
): Record<string, unknown> {
  const { status, incomplete } = finalStatus(answer.finish)
  return responseObject(context, {
    status,
    incomplete,
    model: answer.model || context.modelId,
    output: outputItems(answer.parts, context.requestId, answer.finish),
    usage: responsesUsage(charged.usage, charged.costUsd),
  })
}
