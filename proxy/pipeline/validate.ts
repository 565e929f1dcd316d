/**
 * Stage 2b: the style's envelope, checked with a compiled TypeBox schema. The first problem becomes a
 * 400 `invalid_request` whose message names the field in the client's terms (`messages[0].role`), or
 * by its label when its schema has a title (the admin schemas' fields a form shows).
 */
import type { TSchema } from '@sinclair/typebox'
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors'
import { Value } from '@sinclair/typebox/value'
import { ServiceError } from '../../shared/errors.ts'
import { USD_AMOUNT_PATTERN } from '../../shared/money.ts'
import { EMAIL_RULE } from '../../shared/schemas/admin/field-rules.ts'

export type Validated<T> = { ok: true; value: T } | { ok: false; error: ServiceError }

export type Envelope<T> = {
  check: TypeCheck<TSchema>
  /** Top-level fields the style accepts; any other is refused by name. */
  fields: ReadonlySet<string>
  /** Rules between fields that a schema cannot say. */
  rules?: (value: T) => ServiceError | undefined
  /** How the style words an unknown field. */
  unknownField: (field: string) => string
}

const openaiUnknownField = (field: string) => `Unrecognized request argument supplied: ${field}`

export function envelope<T>(
  schema: TSchema,
  fields: ReadonlySet<string>,
  rules?: (value: T) => ServiceError | undefined,
  unknownField: (field: string) => string = openaiUnknownField,
): Envelope<T> {
  return { check: TypeCompiler.Compile(schema), fields, rules, unknownField }
}

export function validate<T>(body: Record<string, unknown>, spec: Envelope<T>): Validated<T> {
  for (const field in body) {
    if (!spec.fields.has(field))
      return {
        ok: false,
        error: new ServiceError('invalid_request', spec.unknownField(field), { param: field }),
      }
  }
  if (!spec.check.Check(body)) {
    const first = innermost(spec.check.Errors(body).First()!)
    return { ok: false, error: schemaRefusal(first, fieldName(first.path)) }
  }
  const value = body as T
  const error = spec.rules?.(value)
  return error ? { ok: false, error } : { ok: true, value }
}

/**
 * A value that fails its schema, refused naming the field `param`: by the label a form shows for it
 * when its schema has a title ("Requests per minute must be at least 0."), else by its name in the
 * request ("messages[0].role: is required").
 */
export function schemaRefusal(error: ValueError, param: string): ServiceError {
  const label = (error.schema as { title?: string }).title
  const message = label
    ? `${label} ${describeValueError(withoutNull(error))}.`
    : `${param}: ${describeValueError(error)}`
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

/**
 * A union's problem as the problem inside its member of the value's own type, at its full path: a list
 * of blocks with a number among them is wrong at that element (`messages[0].content[1]`), not as a whole.
 */
function innermost(error: ValueError): ValueError {
  // A field with a label is named by it (schemaRefusal), whatever the member.
  if (error.type !== ValueErrorType.Union || (error.schema as { title?: string }).title)
    return error
  const members = (error.schema as unknown as { anyOf?: TSchema[] }).anyOf ?? []
  const same = members.find(
    (member) => member.const === undefined && member.type === jsonType(error.value),
  )
  const inner = same && Value.Errors(same, error.value).First()
  return inner ? innermost({ ...inner, path: error.path + inner.path }) : error
}

/** "/messages/0/role" → "messages[0].role" */
export function fieldName(path: string): string {
  return path
    .split('/')
    .slice(1)
    .reduce(
      (name, part) => (/^\d+$/.test(part) ? `${name}[${part}]` : name ? `${name}.${part}` : part),
      '',
    )
}

/** What a value that fails a schema check must be, in the words of the API's error messages. */
export function describeValueError(error: ValueError): string {
  const schema = error.schema as {
    minItems?: number
    maxItems?: number
    maxLength?: number
    minimum?: number
    maximum?: number
  }
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return 'is required'
    case ValueErrorType.ArrayMinItems:
      return schema.minItems === 1
        ? 'must be a non-empty array'
        : `must have at least ${schema.minItems} items`
    case ValueErrorType.ArrayMaxItems:
      return `must have at most ${schema.maxItems} items`
    case ValueErrorType.StringMinLength:
      return 'must not be empty'
    case ValueErrorType.StringMaxLength:
      return `must be at most ${schema.maxLength} characters`
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
      return `must be at least ${schema.minimum}`
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
      return `must be at most ${schema.maximum}`
    case ValueErrorType.String:
    case ValueErrorType.Boolean:
    case ValueErrorType.Integer:
    case ValueErrorType.Number:
    case ValueErrorType.Object:
    case ValueErrorType.Array:
      return `must be ${kind(error.schema)}`
    case ValueErrorType.Union: {
      const members = (error.schema as unknown as { anyOf?: TSchema[] }).anyOf ?? []
      // A value of one member's type fails that member's own rule (a string not in its form): say which.
      const same = members.find(
        (member) => member.const === undefined && member.type === jsonType(error.value),
      )
      const inner = same && Value.Errors(same, error.value).First()
      if (inner) return describeValueError(inner)
      return `must be ${members.map(kind).join(' or ')}`
    }
    case ValueErrorType.StringPattern:
      return (
        PATTERN_WORDS[(error.schema as TSchema).pattern] ?? `must match ${error.schema.pattern}`
      )
    default:
      return error.message.charAt(0).toLowerCase() + error.message.slice(1)
  }
}

/** Patterns a person fills in, in words rather than as the expression. */
const PATTERN_WORDS: Record<string, string> = {
  [USD_AMOUNT_PATTERN]: 'must be an amount in USD, such as 5 or 2.50',
  [EMAIL_RULE.pattern]: 'must be an e-mail address, such as name@example.com',
}

function jsonType(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value
}

function kind(schema: TSchema): string {
  if (schema.const !== undefined) return JSON.stringify(schema.const)
  const type = schema.type as string | undefined
  if (type === 'integer' && schema.minimum !== undefined)
    return `an integer of at least ${schema.minimum}`
  const names: Record<string, string> = {
    string: 'a string',
    array: 'an array',
    null: 'null',
    integer: 'an integer',
    number: 'a number',
    boolean: 'a boolean',
    object: 'an object',
  }
  return (type && names[type]) ?? 'a value of another type'
}
