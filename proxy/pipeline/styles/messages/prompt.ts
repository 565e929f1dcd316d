/**
 * The size of a Messages prompt for the estimate: body bytes without image data, images, pages of PDF
 * documents, messages, and the web searches the provider may run for it.
 */
import type { MessagesRequest } from '../../../../shared/schemas/messages.ts'
import { pdfPages as countPdfPages } from '../../../core/pdf-pages.ts'
import { WEB_SEARCHES_WITHOUT_LIMIT, type Prompt } from '../../estimate.ts'

type Block = {
  type?: unknown
  source?: { type?: unknown; media_type?: unknown; data?: unknown }
  content?: unknown
}

export function measureMessagesPrompt(body: MessagesRequest, bodyBytes: number): Prompt {
  let images = 0
  let imageBytes = 0
  let pdfPages = 0
  const visit = (blocks: unknown) => {
    if (!Array.isArray(blocks)) return
    for (const block of blocks as Block[]) {
      if (block?.type === 'image') {
        images += 1
        if (typeof block.source?.data === 'string') imageBytes += block.source.data.length
      } else if (
        block?.type === 'document' &&
        block.source?.type === 'base64' &&
        block.source.media_type === 'application/pdf' &&
        typeof block.source.data === 'string'
      )
        pdfPages += countPdfPages(block.source.data)
      else if (block?.type === 'tool_result') visit(block.content)
    }
  }
  for (const message of body.messages) visit(message.content)
  return {
    textBytes: Math.max(0, bodyBytes - imageBytes),
    images,
    pdfPages,
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
