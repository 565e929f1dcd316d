/**
 * Upstream failures turned into the spec's codes, for every provider style. Each says whether the next
 * candidate may be tried: only failures that started no response and are not the client's fault allow a
 * fallback. The adapters read their style's error body into `UpstreamErrorBody` first.
 */
import { ServiceError, type ErrorCode } from '../../shared/errors.ts'

export type UpstreamFailure = { error: ServiceError; fallback: boolean }

/** What a provider's error body says, in any style. */
export type UpstreamErrorBody = { message?: string; code?: string; policy: boolean }

/** An error response (status ≥ 400) from the provider. */
export function failureFromStatus(
  providerId: string,
  status: number,
  upstream: UpstreamErrorBody,
): UpstreamFailure {
  const detail = upstream.message ? `: ${upstream.message}` : ''
  const fail = (code: ErrorCode, message: string, fallback: boolean) => ({
    error: new ServiceError(code, message),
    fallback,
  })
  if (status === 429)
    return fail(
      'upstream_rate_limited',
      `Provider ${providerId} is rate limiting requests. Wait or choose another model.`,
      true,
    )
  if (status >= 500)
    return fail(
      'model_unavailable',
      `Provider ${providerId} could not complete the request (status ${status}).`,
      true,
    )
  if (status === 401 || status === 403 || status === 404) {
    return fail(
      'model_unavailable',
      `Provider ${providerId} is not accepting requests for this model right now (status ${status}).`,
      true,
    )
  }
  if (upstream.policy)
    return fail(
      'provider_policy_rejected',
      `Provider ${providerId} rejected the request during content inspection${detail}`,
      false,
    )
  if (status === 413)
    return fail(
      'payload_too_large',
      `Provider ${providerId} refused the request as too large${detail}`,
      false,
    )
  return fail('invalid_request', `Provider ${providerId} rejected the request${detail}`, false)
}

/** The longest wait a provider may ask of the client through the gateway. */
const LONGEST_RETRY_AFTER_MS = 10 * 60_000

/**
 * A provider's refusal (rate-limited, overloaded, unavailable) with the wait it asked for
 * (`retry-after-ms`, or `retry-after` in seconds or as a date), so the client's Retry-After is the
 * provider's; unchanged when it asked none.
 */
export function withProviderWait(failure: UpstreamFailure, headers: Headers): UpstreamFailure {
  const ms = Number(headers.get('retry-after-ms') ?? Number.NaN)
  const after = headers.get('retry-after')
  const seconds = after === null ? Number.NaN : Number(after)
  const wait = Number.isFinite(ms)
    ? ms
    : Number.isFinite(seconds)
      ? seconds * 1000
      : after !== null
        ? Date.parse(after) - Date.now()
        : Number.NaN
  if (!(wait > 0)) return failure
  const { error } = failure
  return {
    ...failure,
    error: new ServiceError(error.code, error.message, {
      ...error.details,
      retryAfterMs: Math.min(wait, LONGEST_RETRY_AFTER_MS),
    }),
  }
}

/** A response that is not what was asked for, before any of it reached the client: another route may answer. */
export function invalidResponse(check: string): UpstreamFailure {
  return {
    error: new ServiceError(
      'upstream_response_invalid',
      `The provider's response failed validation: ${check}.`,
    ),
    fallback: true,
  }
}

/** The provider could not be reached, or the connection failed before any response. */
export function failureFromNetwork(providerId: string, cause: unknown): UpstreamFailure {
  const reason = cause instanceof Error ? cause.message : String(cause)
  return {
    error: new ServiceError(
      'model_unavailable',
      `Provider ${providerId} could not be reached (${reason}).`,
    ),
    fallback: true,
  }
}

/** `{"error": {"message", "code" | "type"}}` or `{"error": "…"}` or `{"message": "…"}`, as providers write them. */
export function readErrorBody(body: string, policyCodes: ReadonlySet<string>): UpstreamErrorBody {
  try {
    const parsed = JSON.parse(body) as {
      error?: { message?: unknown; code?: unknown; type?: unknown } | string
      message?: unknown
    }
    const error =
      typeof parsed.error === 'object' && parsed.error !== null ? parsed.error : undefined
    const message =
      error?.message ?? (typeof parsed.error === 'string' ? parsed.error : parsed.message)
    const code =
      typeof error?.code === 'string'
        ? error.code
        : typeof error?.type === 'string'
          ? error.type
          : undefined
    return {
      message: typeof message === 'string' ? message.slice(0, 500) : undefined,
      code,
      policy: code !== undefined && policyCodes.has(code),
    }
  } catch {
    return { policy: false }
  }
}

/**
 * The HTTP status an error event at the start of a stream stands for, from its code or type (in either
 * style): a rate limit is 429, a request the provider refuses is 400, anything else (overloaded, an
 * internal error, one it does not name) is a server failure that another route may answer.
 */
export function statusOfStreamError(data: string): number {
  const code = readErrorBody(data, new Set()).code ?? ''
  if (/rate_limit/.test(code)) return 429
  if (/invalid_request|context_length|invalid_argument/.test(code)) return 400
  if (/policy|content_filter|moderation/.test(code)) return 400
  return 503
}
