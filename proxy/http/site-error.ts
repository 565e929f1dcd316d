/** The site server's answer to a body, query or path that fails its route's schema. */
import type { TSchema } from '@sinclair/typebox'
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors'
import { Value } from '@sinclair/typebox/value'
import { ServiceError } from '../../shared/errors.ts'
import { describeValueError, fieldName } from '../pipeline/validate.ts'

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
  const label = (first.schema as { title?: string }).title
  const message = label
    ? `${label} ${describeValueError(withoutNull(first))}.`
    : `${param}: ${describeValueError(first)}`
  return new ServiceError('invalid_request', message, { param })
}

/**
 * A nullable field's problem as the value's own (a form offers null as an empty field, not as a value
 * to type): "must be at least 0", not "must be an integer of at least 0 or null".
 */
function withoutNull(error: ValueError): ValueError {
  if (error.type !== ValueErrorType.Union) return error
  const members = ((error.schema as { anyOf?: TSchema[] }).anyOf ?? []).filter(
    (member) => member.type !== 'null',
  )
  if (members.length !== 1) return error
  return Value.Errors(members[0]!, error.value).First() ?? error
}
