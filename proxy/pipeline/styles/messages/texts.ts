/** The texts of a Messages request: the system prompt, text blocks, tool results and tool inputs. */
import type { MessagesRequest } from '../../../../shared/schemas/messages.ts'
import { visitContent, visitField, visitStrings, type TextVisitor } from '../../../core/texts.ts'

function block(part: Record<string, unknown>, visit: TextVisitor): void {
  if (part.type === 'text') visitField(part, 'text', visit)
  else if (part.type === 'tool_result') visitContent(part, 'content', visit, block)
  else if (part.type === 'tool_use') visitStrings(part.input, visit)
}

export function messagesTexts(body: MessagesRequest, visit: TextVisitor): void {
  visitContent(body as Record<string, unknown>, 'system', visit, block)
  for (const message of body.messages)
    visitContent(message as Record<string, unknown>, 'content', visit, block)
}

export function messagesUsesTools(body: MessagesRequest): boolean {
  return (body.tools?.length ?? 0) > 0
}
