/**
 * The Responses envelope: the shared schema plus the rules between fields a schema cannot say. What the
 * provider would refuse in its own terms (an empty conversation, a structured output without its schema,
 * tool-call arguments that are not JSON) is refused here, naming the field the client sent.
 */
import { ServiceError } from '../../../../shared/errors.ts'
import { ResponsesRequest, responsesRequestFields } from '../../../../shared/schemas/responses.ts'
import { envelope } from '../../validate.ts'

const refuse = (param: string, message: string) =>
  new ServiceError('invalid_request', `${param}: ${message}`, { param })

export const responsesEnvelope = envelope<ResponsesRequest>(
  ResponsesRequest,
  responsesRequestFields,
  (body) => {
    if (Array.isArray(body.input) && body.input.length === 0)
      return refuse('input', 'must be a non-empty array')
    return textFormatProblem((body as { text?: unknown }).text) ?? argumentsProblem(body.input)
  },
)

function textFormatProblem(text: unknown): ServiceError | undefined {
  const format = (text as { format?: { type?: unknown; schema?: unknown } } | null | undefined)
    ?.format
  if (format?.type !== 'json_schema') return undefined
  const schema = format.schema
  if (schema === undefined) return refuse('text.format.schema', 'is required for json_schema')
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
    return refuse('text.format.schema', 'must be an object')
  return undefined
}

/** A function call's arguments, as the model would have written them: a JSON object in text. */
function argumentsProblem(input: ResponsesRequest['input']): ServiceError | undefined {
  if (!Array.isArray(input)) return undefined
  for (const [index, item] of (input as { type?: unknown; arguments?: unknown }[]).entries()) {
    if (item?.type !== 'function_call' || item.arguments === undefined) continue
    const param = `input[${index}].arguments`
    if (typeof item.arguments !== 'string') return refuse(param, 'must be a string of JSON')
    let value: unknown
    try {
      value = JSON.parse(item.arguments)
    } catch {
      return refuse(param, 'is not valid JSON')
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      return refuse(param, 'must be a JSON object')
  }
  return undefined
}
