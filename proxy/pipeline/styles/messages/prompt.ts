/**
 * The size of a Messages prompt for the estimate: body bytes without image data, images, messages, and
 * the web searches the provider may run for it.
 */
import type { MessagesRequest } from '../../../../shared/schemas/messages.ts'
import { WEB_SEARCHES_WITHOUT_LIMIT, type Prompt } from '../../estimate.ts'

type Block = { type?: unknown; source?: { data?: unknown }; content?: unknown }

export function measureMessagesPrompt(body: MessagesRequest, bodyBytes: number): Prompt {
  let images = 0
  let imageBytes = 0
  const visit = (blocks: unknown) => {
    if (!Array.isArray(blocks)) return
    for (const block of blocks as Block[]) {
      if (block?.type === 'image') {
        images += 1
        if (typeof block.source?.data === 'string') imageBytes += block.source.data.length
      } else if (block?.type === 'tool_result') visit(block.content)
    }
  }
  for (const message of body.messages) visit(message.content)
  return {
    textBytes: Math.max(0, bodyBytes - imageBytes),
    images,
    messages: body.messages.length,
    webSearches: webSearches(body.tools),
  }
}

/** The searches the provider's own web search tools allow (`web_search_…`, bounded by `max_uses`). */
function webSearches(tools: MessagesRequest['tools']): number {
  let searches = 0
  for (const tool of (tools ?? []) as { type?: unknown; max_uses?: unknown }[]) {
    if (typeof tool.type !== 'string' || !tool.type.startsWith('web_search')) continue
    searches +=
      typeof tool.max_uses === 'number' && tool.max_uses > 0
        ? tool.max_uses
        : WEB_SEARCHES_WITHOUT_LIMIT
  }
  return searches
}
