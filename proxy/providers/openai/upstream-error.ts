/**
 * Upstream failures of an OpenAI-compatible provider, turned into the spec's codes. Each says whether
 * the next candidate may be tried: only failures that started no response and are not the client's
 * fault allow a fallback.
 */
import { ServiceError, type ErrorCode } from '../../../shared/errors.ts'

export type UpstreamFailure = { error: ServiceError; fallback: boolean }

const policyCodes = new Set(['content_policy_violation', 'content_filter', 'moderation_blocked'])

/** An error response (status ≥ 400) from the provider. */
export function failureFromResponse(providerId: string, status: number, body: string): UpstreamFailure {
  const upstream = readErrorBody(body)
  const detail = upstream.message ? `: ${upstream.message}` : ''
  const fail = (code: ErrorCode, message: string, fallback: boolean) => ({ error: new ServiceError(code, message), fallback })
  if (status === 429) return fail('upstream_rate_limited', `Provider ${providerId} is rate limiting requests. Wait or choose another model.`, true)
  if (status >= 500) return fail('model_unavailable', `Provider ${providerId} could not complete the request (status ${status}).`, true)
  if (status === 401 || status === 403 || status === 404) {
    return fail('model_unavailable', `Provider ${providerId} is not accepting requests for this model right now (status ${status}).`, true)
  }
  if (upstream.code && policyCodes.has(upstream.code)) {
    return fail('provider_policy_rejected', `Provider ${providerId} rejected the request during content inspection${detail}`, false)
  }
  if (status === 413) return fail('payload_too_large', `Provider ${providerId} refused the request as too large${detail}`, false)
  return fail('invalid_request', `Provider ${providerId} rejected the request${detail}`, false)
}

/** The provider could not be reached, or the connection failed before any response. */
export function failureFromNetwork(providerId: string, cause: unknown): UpstreamFailure {
  const reason = cause instanceof Error ? cause.message : String(cause)
  return { error: new ServiceError('model_unavailable', `Provider ${providerId} could not be reached (${reason}).`), fallback: true }
}

function readErrorBody(body: string): { message?: string; code?: string } {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown; code?: unknown } | string; message?: unknown }
    const error = typeof parsed.error === 'object' && parsed.error !== null ? parsed.error : undefined
    const message = error?.message ?? (typeof parsed.error === 'string' ? parsed.error : parsed.message)
    return {
      message: typeof message === 'string' ? message.slice(0, 500) : undefined,
      code: typeof error?.code === 'string' ? error.code : undefined,
    }
  } catch {
    return {}
  }
}
