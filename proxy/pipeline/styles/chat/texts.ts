/** The texts of a Chat Completions request: message content and text parts, and tool-call arguments. */
import type { ChatRequest } from '../../../../shared/schemas/chat.ts'
import { visitContent, visitField, type TextVisitor } from '../../../core/texts.ts'

export function chatTexts(body: ChatRequest, visit: TextVisitor): void {
  for (const message of body.messages as Record<string, unknown>[]) {
    visitContent(message, 'content', visit, (part, v) => {
      if (part.type === 'text') visitField(part, 'text', v)
    })
    const calls = message.tool_calls
    if (Array.isArray(calls))
      for (const call of calls)
        visitField((call as { function?: unknown })?.function, 'arguments', visit)
    visitField(message.function_call, 'arguments', visit)
  }
}

export function chatUsesTools(body: ChatRequest): boolean {
  const raw = body as Record<string, unknown>
  return (
    (Array.isArray(raw.tools) && raw.tools.length > 0) ||
    (Array.isArray(raw.functions) && raw.functions.length > 0)
  )
}
