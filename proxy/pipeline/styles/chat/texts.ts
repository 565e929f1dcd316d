/**
 * The texts of a Chat Completions request: message content (text and refusal parts, the name and the
 * text of a file given inline as text), participants' names, refusals, tool-call arguments, the tools' and legacy functions'
 * descriptions and schemas, a JSON-schema response format, and predicted output. Files given as binary
 * data (PDF) or by ID, images and audio are not texts the gateway can read.
 */
import type { ChatRequest } from '../../../../shared/schemas/chat.ts'
import {
  visitContent,
  visitField,
  visitSchemaTexts,
  visitTextDataUrl,
  type TextVisitor,
} from '../../../core/texts.ts'

function part(part: Record<string, unknown>, visit: TextVisitor): void {
  if (part.type === 'text') visitField(part, 'text', visit)
  else if (part.type === 'refusal') visitField(part, 'refusal', visit)
  else if (part.type === 'file' && typeof part.file === 'object' && part.file !== null) {
    visitField(part.file, 'filename', visit)
    visitTextDataUrl(part.file as Record<string, unknown>, 'file_data', visit)
  }
}

/** A function's (or custom tool's) description and the texts of its parameter schema. */
function functionTexts(fn: unknown, visit: TextVisitor): void {
  if (typeof fn !== 'object' || fn === null) return
  visitField(fn, 'description', visit)
  visitSchemaTexts((fn as Record<string, unknown>).parameters, visit)
}

export function chatTexts(body: ChatRequest, visit: TextVisitor): void {
  for (const message of body.messages as Record<string, unknown>[]) {
    visitContent(message, 'content', visit, part)
    visitField(message, 'refusal', visit)
    // A participant's name, which the provider shows the model.
    visitField(message, 'name', visit)
    const calls = message.tool_calls
    if (Array.isArray(calls))
      for (const call of calls)
        visitField((call as { function?: unknown })?.function, 'arguments', visit)
    visitField(message.function_call, 'arguments', visit)
  }
  const raw = body as Record<string, unknown>
  if (Array.isArray(raw.tools))
    for (const tool of raw.tools as { function?: unknown; custom?: unknown }[])
      functionTexts(tool?.function ?? tool?.custom, visit)
  if (Array.isArray(raw.functions)) for (const fn of raw.functions) functionTexts(fn, visit)
  const format = raw.response_format as { json_schema?: Record<string, unknown> } | undefined
  if (typeof format?.json_schema === 'object' && format.json_schema !== null) {
    visitField(format.json_schema, 'description', visit)
    visitSchemaTexts(format.json_schema.schema, visit)
  }
  const prediction = raw.prediction
  if (typeof prediction === 'object' && prediction !== null)
    visitContent(prediction as Record<string, unknown>, 'content', visit, part)
}

export function chatUsesTools(body: ChatRequest): boolean {
  const raw = body as Record<string, unknown>
  return (
    (Array.isArray(raw.tools) && raw.tools.length > 0) ||
    (Array.isArray(raw.functions) && raw.functions.length > 0)
  )
}
