/**
 * The texts of a Responses request: instructions, input text, message parts (refusals included, and the
 * name and the text of a file given inline as text), function arguments and outputs, the tools'
 * descriptions and schemas, and a JSON-schema output format. Files given as binary data (PDF), by ID or
 * by URL, and images, are not texts the gateway can read.
 */
import type { ResponsesRequest } from '../../../../shared/schemas/responses.ts'
import type { Turn } from '../../../core/neutral/conversation.ts'
import {
  isTextMediaType,
  visitBase64Text,
  visitContent,
  visitField,
  visitSchemaTexts,
  visitTextDataUrl,
  type TextVisitor,
} from '../../../core/texts.ts'

function part(item: Record<string, unknown>, visit: TextVisitor): void {
  if (item.type === 'input_text' || item.type === 'output_text' || item.type === 'text')
    visitField(item, 'text', visit)
  else if (item.type === 'refusal') visitField(item, 'refusal', visit)
  else if (item.type === 'input_file') {
    visitField(item, 'filename', visit)
    visitTextDataUrl(item, 'file_data', visit)
  }
}

export function responsesTexts(body: ResponsesRequest, visit: TextVisitor): void {
  visitField(body, 'instructions', visit)
  if (typeof body.input === 'string') visitField(body, 'input', visit)
  for (const item of Array.isArray(body.input) ? (body.input as Record<string, unknown>[]) : []) {
    const type = item.type ?? 'message'
    if (type === 'message') visitContent(item, 'content', visit, part)
    else if (type === 'function_call') visitField(item, 'arguments', visit)
    else if (type === 'function_call_output') visitContent(item, 'output', visit, part)
  }
  for (const tool of (body.tools ?? []) as Record<string, unknown>[]) {
    visitField(tool, 'description', visit)
    visitSchemaTexts(tool.parameters, visit)
  }
  const format = (body as { text?: { format?: Record<string, unknown> } }).text?.format
  if (typeof format === 'object' && format !== null) {
    visitField(format, 'description', visit)
    visitSchemaTexts(format.schema, visit)
  }
}

/** The texts of stored turns (a follow-up's earlier exchanges): what the user, the tools and the model said. */
export function turnTexts(turns: Turn[], visit: TextVisitor): void {
  for (const turn of turns) {
    if (turn.role === 'system') visitField(turn, 'text', visit)
    else if (turn.role === 'assistant') {
      visitField(turn, 'text', visit)
      for (const call of turn.toolCalls) visitField(call, 'arguments', visit)
    } else
      for (const content of turn.content) {
        if (content.type === 'file') {
          // A stored file part holds its data in base64, its media type beside it.
          visitField(content, 'filename', visit)
          if (isTextMediaType(content.mediaType)) visitBase64Text(content, 'data', visit)
        } else part(content as Record<string, unknown>, visit)
      }
  }
}

export function responsesUsesTools(body: ResponsesRequest): boolean {
  return (body.tools?.length ?? 0) > 0
}
