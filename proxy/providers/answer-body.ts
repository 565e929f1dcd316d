/** The first checks of a provider's non-streaming answer, whatever its style: JSON, and an object. */
import type { TokenUsage } from '../core/catalog/pricing.ts'
import type { AnswerRead } from './adapter.ts'
import { invalidResponse } from './upstream-failure.ts'

export function parseAnswerBody(
  text: string,
): { ok: true; body: Record<string, unknown> } | AnswerRead {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return invalidAnswer('the body is not JSON')
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    return invalidAnswer('the body is not a JSON object')
  return { ok: true, body: json as Record<string, unknown> }
}

/** An answer that failed a check; only the provider's own usage (if it reported any) is charged. */
export function invalidAnswer(check: string, usage?: TokenUsage): AnswerRead {
  return { ok: false, error: invalidResponse(check).error, usage }
}
