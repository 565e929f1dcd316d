/**
 * The error table of the service: every spec `error.code` with its HTTP status, whether the official
 * SDKs should retry it unchanged, and the error `type` used in the OpenAI-style and Messages-style
 * bodies. No status literal for an error lives anywhere else.
 */

export type ErrorSpec = {
  status: number
  /** Sent as `x-should-retry`: the SDKs otherwise retry every 429 and 5xx up to twice on their own. */
  retry: boolean
  /** `error.type` in the OpenAI-style body. */
  openaiType: string
  /** `error.type` in the Messages-style body. */
  messagesType: string
  /** Seconds for `Retry-After` when the refusal has a fixed delay (the spec's overload delay). */
  retryAfterSeconds?: number
}

const invalid = { openaiType: 'invalid_request_error', messagesType: 'invalid_request_error' }
const permission = { openaiType: 'permission_error', messagesType: 'permission_error' }
const server = { openaiType: 'server_error', messagesType: 'api_error' }
const overloaded = { openaiType: 'server_error', messagesType: 'overloaded_error' }

export const errorTable = {
  invalid_request: { status: 400, retry: false, ...invalid },
  context_too_long: { status: 400, retry: false, ...invalid },
  provider_policy_rejected: { status: 400, retry: false, ...invalid },
  invalid_api_key: {
    status: 401,
    retry: false,
    openaiType: 'authentication_error',
    messagesType: 'authentication_error',
  },
  insufficient_credits: {
    status: 402,
    retry: false,
    openaiType: 'insufficient_quota',
    messagesType: 'billing_error',
  },
  trial_exhausted: {
    status: 402,
    retry: false,
    openaiType: 'insufficient_quota',
    messagesType: 'billing_error',
  },
  model_not_allowed: { status: 403, retry: false, ...permission },
  spend_limit_exceeded: { status: 403, retry: false, ...permission },
  guardrail_blocked: { status: 403, retry: false, ...permission },
  account_suspended: { status: 403, retry: false, ...permission },
  unknown_model: {
    status: 404,
    retry: false,
    openaiType: 'invalid_request_error',
    messagesType: 'not_found_error',
  },
  request_in_progress: { status: 409, retry: true, ...invalid },
  payload_too_large: {
    status: 413,
    retry: false,
    openaiType: 'invalid_request_error',
    messagesType: 'request_too_large',
  },
  free_quota_exceeded: {
    status: 429,
    retry: false,
    openaiType: 'rate_limit_error',
    messagesType: 'rate_limit_error',
  },
  usage_limit_exceeded: {
    status: 429,
    retry: true,
    openaiType: 'rate_limit_error',
    messagesType: 'rate_limit_error',
  },
  upstream_error: { status: 502, retry: true, ...server },
  image_request_failed: { status: 502, retry: false, ...server },
  admission_unconfirmed: { status: 502, retry: true, ...server },
  model_alias_unavailable: { status: 503, retry: true, ...overloaded },
  model_unavailable: { status: 503, retry: true, ...overloaded },
  no_available_route: { status: 503, retry: false, ...server },
  upstream_rate_limited: { status: 503, retry: true, ...overloaded },
  auto_unresolvable: { status: 503, retry: false, ...server },
  upstream_response_invalid: { status: 503, retry: true, ...server },
  images_unavailable: { status: 503, retry: false, ...server },
  upstream_capacity_unavailable: { status: 503, retry: true, ...overloaded },
  overloaded: { status: 503, retry: true, retryAfterSeconds: 5, ...overloaded },
  request_timeout: {
    status: 504,
    retry: false,
    openaiType: 'timeout_error',
    messagesType: 'timeout_error',
  },
  // The service's own codes, for conditions the spec's table does not name.
  not_found: {
    status: 404,
    retry: false,
    openaiType: 'invalid_request_error',
    messagesType: 'not_found_error',
  },
  unauthorized: {
    status: 401,
    retry: false,
    openaiType: 'authentication_error',
    messagesType: 'authentication_error',
  },
  forbidden: { status: 403, retry: false, ...permission },
  conflict: { status: 409, retry: false, ...invalid },
  internal_error: { status: 500, retry: true, ...server },
} as const satisfies Record<string, ErrorSpec>

export type ErrorCode = keyof typeof errorTable

/** Fields of a refusal beyond its code and message. */
export type ErrorDetails = {
  /** The request field the error is about (`param` in the OpenAI-style body). */
  param?: string
  retryAfterMs?: number
  /**
   * Whether retrying unchanged can help, when this refusal differs from its code's rule (`x-should-retry`):
   * false for a wait longer than the SDKs should sit through, or a request no wait can admit.
   */
  retry?: boolean
  /**
   * The Messages style's `error.details`: a machine-readable reason the SDK acts on (`error_code:
   * "thread_not_found"` has it replay the whole conversation).
   */
  errorDetails?: Record<string, unknown>
}

/** The one error class: its status comes from the table. */
export class ServiceError extends Error {
  readonly status: number
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetails = {},
  ) {
    super(message)
    this.status = errorTable[code].status
  }
}

/** Retry-After in whole seconds, rounded up: clients must not come back before the window opens. */
export function retryAfterSeconds(code: ErrorCode, retryAfterMs?: number): number | undefined {
  if (retryAfterMs !== undefined) return Math.max(1, Math.ceil(retryAfterMs / 1000))
  const spec: ErrorSpec = errorTable[code]
  return spec.retryAfterSeconds
}
