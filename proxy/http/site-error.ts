/** The site server's answer to a body, query or path that fails its route's schema. */
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors'
import { ServiceError } from '../../shared/errors.ts'
import { describeValueError, fieldName } from '../pipeline/validate.ts'

/** A body, query or path that fails its route's schema: 400 naming the first field that does. */
export function validationError(where: string, error: { valueError?: ValueError }): ServiceError {
  const first = error.valueError
  if (!first) return new ServiceError('invalid_request', `The request ${where} is not valid.`)
  const param = fieldName(first.path) || where
  // TypeBox points at the extra property itself.
  if (first.type === ValueErrorType.ObjectAdditionalProperties)
    return new ServiceError('invalid_request', `${param}: unknown field`, { param })
  return new ServiceError('invalid_request', `${param}: ${describeValueError(first)}`, { param })
}
