/** Errors of the site server: the same `{"error": {"code", "message"}}` shape and headers as the API. */
import { errorTable, type ServiceError } from '../../shared/errors.ts'

export function siteError(error: ServiceError): Response {
  return new Response(JSON.stringify({ error: { code: error.code, message: error.message, param: error.details.param ?? null } }), {
    status: errorTable[error.code].status,
    headers: { 'content-type': 'application/json', 'x-service-error-code': error.code, 'referrer-policy': 'no-referrer' },
  })
}
