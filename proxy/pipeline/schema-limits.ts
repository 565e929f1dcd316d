/**
 * Stage 2, after the envelope: limits on the JSON schemas a request carries (tool parameters and
 * structured-output schemas), so that an oversized or deeply nested schema is refused by name here
 * instead of being forwarded, held for and refused (or worse, slowly processed) upstream.
 */
import { ServiceError } from '../../shared/errors.ts'

export const MAX_TOOLS = 128
export const MAX_SCHEMA_BYTES = 64 * 1024
export const MAX_TOOLS_BYTES = 1024 * 1024
export const MAX_SCHEMA_DEPTH = 24

type Tool = { function?: { parameters?: unknown }; parameters?: unknown; input_schema?: unknown }

export function checkSchemas(body: Record<string, unknown>): ServiceError | undefined {
  for (const field of ['tools', 'functions'] as const) {
    const tools = body[field]
    if (!Array.isArray(tools)) continue
    if (tools.length > MAX_TOOLS)
      return refuse(field, `at most ${MAX_TOOLS} tools are allowed (got ${tools.length})`)
    let total = 0
    for (const [index, tool] of (tools as Tool[]).entries()) {
      const schema = tool?.function?.parameters ?? tool?.parameters ?? tool?.input_schema
      const problem = schema === undefined ? undefined : checkSchema(schema, `${field}[${index}]`)
      if (typeof problem === 'object') return problem
      total += problem ?? 0
    }
    if (total > MAX_TOOLS_BYTES)
      return refuse(
        field,
        `tool schemas total ${total} bytes; at most ${MAX_TOOLS_BYTES} are allowed`,
      )
  }
  const formats: [unknown, string][] = [
    [
      (body.response_format as { json_schema?: { schema?: unknown } } | undefined)?.json_schema
        ?.schema,
      'response_format.json_schema.schema',
    ],
    [
      (body.text as { format?: { schema?: unknown } } | undefined)?.format?.schema,
      'text.format.schema',
    ],
    [(body.output_format as { schema?: unknown } | undefined)?.schema, 'output_format.schema'],
  ]
  for (const [schema, param] of formats) {
    if (schema === undefined) continue
    const problem = checkSchema(schema, param)
    if (typeof problem === 'object') return problem
  }
  return undefined
}

/** The schema's size in bytes, or why it is refused. */
function checkSchema(schema: unknown, param: string): number | ServiceError {
  const depth = depthOf(schema)
  if (depth > MAX_SCHEMA_DEPTH)
    return refuse(
      param,
      `the schema is nested ${depth} levels deep; at most ${MAX_SCHEMA_DEPTH} are allowed`,
    )
  const bytes = JSON.stringify(schema)?.length ?? 0
  if (bytes > MAX_SCHEMA_BYTES)
    return refuse(param, `the schema is ${bytes} bytes; at most ${MAX_SCHEMA_BYTES} are allowed`)
  return bytes
}

function depthOf(root: unknown): number {
  let deepest = 0
  const stack: [unknown, number][] = [[root, 1]]
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!
    if (typeof node !== 'object' || node === null) continue
    if (depth > deepest) deepest = depth
    if (deepest > MAX_SCHEMA_DEPTH) return deepest
    for (const child of Object.values(node))
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1])
  }
  return deepest
}

function refuse(param: string, message: string): ServiceError {
  return new ServiceError('invalid_request', `${param}: ${message}`, { param })
}
