/** The site server's answer to a body, query or path that fails its route's schema. */
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors'
import { ServiceError } from '../../shared/errors.ts'
import { fieldName, schemaRefusal } from '../pipeline/validate.ts'

/**
 * A body, query or path that fails its route's schema: 400 naming the first field that does, by the
 * label the dashboard shows for it when its schema has a title ("Requests per minute must be at least
 * 0."), else by its name in the request.
 */
export function validationError(where: string, error: { valueError?: ValueError }): ServiceError {
  const first = error.valueError
  if (!first) return new ServiceError('invalid_request', `The request ${where} is not valid.`)
  const param = fieldName(first.path) || where
  // TypeBox points at the extra property itself.
  if (first.type === ValueErrorType.ObjectAdditionalProperties)
    return new ServiceError('invalid_request', `${param}: unknown field`, { param })
  return schemaRefusal(first, param)
}
