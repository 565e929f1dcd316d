/** Errors of the site server: the same `{"error": {"code", "message"}}` shape and headers as the API. */
import { errorTable, retryAfterSeconds, type ServiceError } from '../../shared/errors.ts'

export function siteError(error: ServiceError): Response {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-service-error-code': error.code, 'referrer-policy': 'no-referrer' }
  const retryAfter = retryAfterSeconds(error.code, error.details.retryAfterMs)
  if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter)
  return new Response(JSON.stringify({ error: { code: error.code, message: error.message, param: error.details.param ?? null } }), {
    status: errorTable[error.code].status,
    headers,
  })
}
