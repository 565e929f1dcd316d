/** The texts of a Responses request: instructions, input text, message parts, function arguments and outputs. */
import type { ResponsesRequest } from '../../../../shared/schemas/responses.ts'
import { visitContent, visitField, type TextVisitor } from '../../../core/texts.ts'

function part(item: Record<string, unknown>, visit: TextVisitor): void {
  if (item.type === 'input_text' || item.type === 'output_text' || item.type === 'text')
    visitField(item, 'text', visit)
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
}

export function responsesUsesTools(body: ResponsesRequest): boolean {
  return (body.tools?.length ?? 0) > 0
}
