/**
 * A Chat Completions answer read back: checked for the shape clients rely on, its first choice in
 * neutral form, its usage.
 */
import { ServiceError } from '../../../shared/errors.ts'
import type { AnswerPart, FinishReason } from '../../translate/answer.ts'
import type { TokenUsage } from '../../catalog/pricing.ts'
import type { AnswerRead } from '../adapter.ts'
import { readChatUsage } from './usage.ts'

type Choice = { message?: { content?: unknown; refusal?: unknown; tool_calls?: { id?: unknown; function?: { name?: unknown; arguments?: unknown } }[] }; finish_reason?: unknown }

export function readChatAnswer(text: string): AnswerRead {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return invalid('the body is not JSON')
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return invalid('the body is not a JSON object')
  const body = json as Record<string, unknown>
  const usage = readChatUsage(body.usage)
  if (!Array.isArray(body.choices)) return invalid('choices is missing', usage)
  const choices = body.choices as Choice[]
  if (choices.some((choice) => typeof choice !== 'object' || choice === null || typeof choice.message !== 'object' || choice.message === null)) {
    return invalid('a choice has no message', usage)
  }
  const first = choices[0]
  const parts: AnswerPart[] = []
  const content = first?.message?.content ?? first?.message?.refusal
  if (typeof content === 'string' && content !== '') parts.push({ type: 'text', text: content })
  for (const call of first?.message?.tool_calls ?? []) {
    if (typeof call.id !== 'string' || typeof call.function?.name !== 'string') return invalid('a tool call has no id or name', usage)
    parts.push({ type: 'tool_call', id: call.id, name: call.function.name, arguments: typeof call.function.arguments === 'string' ? call.function.arguments : '{}' })
  }
  return {
    ok: true,
    json: body,
    answer: { model: typeof body.model === 'string' ? body.model : '', parts, finish: chatFinish(first?.finish_reason), stopSequence: null, usage },
  }
}

/** `finish_reason` in neutral form; a legacy `function_call` is a tool call. */
export function chatFinish(reason: unknown): FinishReason {
  switch (reason) {
    case 'length':
      return 'length'
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls'
    case 'content_filter':
      return 'content_filter'
    default:
      return 'stop'
  }
}

function invalid(check: string, usage?: TokenUsage): AnswerRead {
  return { ok: false, error: new ServiceError('upstream_response_invalid', `The provider's response failed validation: ${check}.`), usage }
}
