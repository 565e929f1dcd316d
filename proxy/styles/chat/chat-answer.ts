/**
 * A non-streaming Chat Completions answer from the provider: checked for the shape clients rely on,
 * its usage read, and `usage.cost` (USD) added to what the client receives.
 */
import { ServiceError } from '../../../shared/errors.ts'
import { nanoToUsd } from '../../../shared/money.ts'
import type { TokenUsage } from '../../catalog/pricing.ts'
import { chatUsage, readChatUsage } from './usage.ts'

export type ChatAnswer =
  | { ok: true; json: Record<string, unknown>; usage: TokenUsage | undefined }
  | { ok: false; error: ServiceError; usage: TokenUsage | undefined }

export function readChatAnswer(text: string): ChatAnswer {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return invalid('the body is not JSON', undefined)
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return invalid('the body is not a JSON object', undefined)
  const answer = json as Record<string, unknown>
  const usage = readChatUsage(answer.usage)
  if (!Array.isArray(answer.choices)) return invalid('choices is missing', usage)
  if (answer.choices.some((choice) => typeof choice !== 'object' || choice === null || typeof choice.message !== 'object')) {
    return invalid('a choice has no message', usage)
  }
  return { ok: true, json: answer, usage }
}

/** The answer as the client gets it: the provider's body with usage (the gateway's count if it had none) and its cost. */
export function chatAnswerBody(json: Record<string, unknown>, usage: TokenUsage, chargedNano: number): string {
  const reported = typeof json.usage === 'object' && json.usage !== null ? (json.usage as Record<string, unknown>) : chatUsage(usage)
  json.usage = { ...reported, cost: Number(nanoToUsd(chargedNano)) }
  return JSON.stringify(json)
}

function invalid(check: string, usage: TokenUsage | undefined): ChatAnswer {
  return { ok: false, error: new ServiceError('upstream_response_invalid', `The provider's response failed validation: ${check}.`), usage }
}
