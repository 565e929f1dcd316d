/**
 * The texts of a Messages request: the system prompt, text blocks, tool results and tool inputs,
 * documents (plain-text and content sources, title, context), search results (content, title, source),
 * and the tools' descriptions and schemas. Thinking blocks are left alone: they are the model's own,
 * signed by the provider, and a rewrite would void the signature.
 */
import type { MessagesRequest } from '../../../../shared/schemas/messages.ts'
import {
  visitContent,
  visitField,
  visitSchemaTexts,
  visitStrings,
  type TextVisitor,
} from '../../../core/texts.ts'

function block(part: Record<string, unknown>, visit: TextVisitor): void {
  switch (part.type) {
    case 'text':
      visitField(part, 'text', visit)
      break
    case 'tool_result':
      visitContent(part, 'content', visit, block)
      break
    case 'tool_use':
      visitStrings(part.input, visit)
      break
    case 'document':
      document(part, visit)
      break
    case 'search_result':
      visitField(part, 'title', visit)
      visitField(part, 'source', visit)
      visitContent(part, 'content', visit, block)
      break
  }
}

/** A document's own texts: `text` sources are the text itself, `content` sources are blocks. */
function document(part: Record<string, unknown>, visit: TextVisitor): void {
  visitField(part, 'title', visit)
  visitField(part, 'context', visit)
  const source = part.source as Record<string, unknown> | undefined
  if (typeof source !== 'object' || source === null) return
  if (source.type === 'text') visitField(source, 'data', visit)
  else if (source.type === 'content') visitContent(source, 'content', visit, block)
}

/** The conversation's texts: system prompt and messages. */
export function messagesContentTexts(body: MessagesRequest, visit: TextVisitor): void {
  visitContent(body as Record<string, unknown>, 'system', visit, block)
  for (const message of body.messages)
    visitContent(message as Record<string, unknown>, 'content', visit, block)
}

/** The tools' texts: descriptions, the texts of their input schemas, and their input examples. */
export function messagesToolTexts(body: MessagesRequest, visit: TextVisitor): void {
  for (const tool of (body.tools ?? []) as Record<string, unknown>[]) {
    visitField(tool, 'description', visit)
    visitSchemaTexts(tool.input_schema, visit)
    visitStrings(tool.input_examples, visit)
  }
}

export function messagesTexts(body: MessagesRequest, visit: TextVisitor): void {
  messagesContentTexts(body, visit)
  messagesToolTexts(body, visit)
}

export function messagesUsesTools(body: MessagesRequest): boolean {
  return (body.tools?.length ?? 0) > 0
}
