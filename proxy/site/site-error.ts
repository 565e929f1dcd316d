/** Errors of the site server: the same `{"error": {"code", "message"}}` shape and headers as the API. */
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors'
import { errorTable, retryAfterSeconds, ServiceError } from '../../shared/errors.ts'
import { fieldName } from '../gateway/validate.ts'

export function siteError(error: ServiceError): Response {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-service-error-code': error.code, 'referrer-policy': 'no-referrer' }
  const retryAfter = retryAfterSeconds(error.code, error.details.retryAfterMs)
  if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter)
  return new Response(JSON.stringify({ error: { code: error.code, message: error.message, param: error.details.param ?? null } }), {
    status: errorTable[error.code].status,
    headers,
  })
}

/** A body, query or path that fails its route's schema: 400 naming the first field that does. */
export function validationError(where: string, error: { valueError?: ValueError }): ServiceError {
  const first = error.valueError
  if (!first) return new ServiceError('invalid_request', `The request ${where} is not valid.`)
  const param = fieldName(first.path) || where
  // TypeBox points at the extra property itself.
  if (first.type === ValueErrorType.ObjectAdditionalProperties) return new ServiceError('invalid_request', `${param}: unknown field`, { param })
  return new ServiceError('invalid_request', `${param}: ${first.message}`, { param })
}
