/**
 * The headers every gateway response carries, and error responses in the client's style. The error's
 * status, retry hint and `x-service-error-code` come from the error table; the body from the style's
 * renderer; the cost is what was charged (0 when nothing was). The endpoint frame adds the balance to an
 * answer that went out before admission read it.
 */
import { errorTable, retryAfterSeconds, type ServiceError } from '../../shared/errors.ts'
import { nanoToUsd } from '../../shared/money.ts'
import type { Call } from '../core/call.ts'

export type ErrorRenderer = (error: ServiceError) => string

export const BALANCE_HEADER = 'x-service-balance-usd'

/**
 * The longest Retry-After (seconds) a refusal leaves to the SDKs' own retries. Past it the OpenAI SDK
 * ignores the header and retries after its own backoff of about a second (refused again, twice), and the
 * Anthropic SDK sleeps through it twice without a word to the caller: such a refusal goes to the caller
 * at once, with `x-should-retry: false`, and the caller waits for Retry-After itself. A rate limit's wait
 * reaches 62 s (its oldest two-second bucket leaving the view).
 */
export const LONGEST_SDK_WAIT_SECONDS = 60

/** x-request-id, and what is known of balance, model, provider and cost. */
export function serviceHeaders(call: Call, costNano?: number): Record<string, string> {
  const headers: Record<string, string> = { 'x-request-id': call.requestId }
  if (call.availableNano !== undefined)
    headers[BALANCE_HEADER] = nanoToUsd(Math.max(0, call.availableNano))
  if (call.served) {
    headers['x-service-model'] = call.served.model.id
    headers['x-service-provider'] = call.served.route.provider.id
  }
  if (costNano !== undefined) headers['x-service-cost-usd'] = nanoToUsd(costNano)
  if (call.redactions) headers['x-service-guardrail-redactions'] = headerText(call.redactions)
  return headers
}

/**
 * Text a header can carry: a filter's name is any text but brackets and control characters, and a header
 * value only Latin-1 (a name such as `Clé €` would make the answer fail after it was charged). Bytes
 * outside printable ASCII, and `%` itself, are written percent-encoded as UTF-8, as in a URL.
 */
function headerText(text: string): string {
  return text.replace(/[^\x20-\x24\x26-\x7e]+/g, (run) =>
    Array.from(
      new TextEncoder().encode(run),
      (byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
    ).join(''),
  )
}

export function errorResponse(
  call: Call,
  error: ServiceError,
  render: ErrorRenderer,
  styleHeaders: Record<string, string> = {},
): Response {
  const spec = errorTable[error.code]
  const headers = { ...serviceHeaders(call, call.chargedNano), ...styleHeaders }
  headers['content-type'] = 'application/json'
  headers['x-service-error-code'] = error.code
  const retryAfter = retryAfterSeconds(error.code, error.details.retryAfterMs)
  const sdkWaits = retryAfter === undefined || retryAfter <= LONGEST_SDK_WAIT_SECONDS
  headers['x-should-retry'] = String((error.details.retry ?? spec.retry) && sdkWaits)
  if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter)
  // A client that went away is recorded as such (499), whatever error ended its request.
  if (call.status !== 499) call.status = spec.status
  call.errorCode = error.code
  return new Response(render(error), { status: spec.status, headers })
}

/** An error of the site, the account endpoints and the playground: the API's `{"error": {"code", "message", "param"}}` shape and headers. */
export function siteError(error: ServiceError): Response {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-service-error-code': error.code,
    'referrer-policy': 'no-referrer',
  }
  const retryAfter = retryAfterSeconds(error.code, error.details.retryAfterMs)
  if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter)
  return new Response(
    JSON.stringify({
      error: { code: error.code, message: error.message, param: error.details.param ?? null },
    }),
    {
      status: errorTable[error.code].status,
      headers,
    },
  )
}
