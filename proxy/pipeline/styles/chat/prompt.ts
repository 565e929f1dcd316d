/**
 * The size of a Chat Completions prompt for the estimate: the body's bytes without image data (which
 * is not tokenized as text), the number of images, the pages of PDF files, and the number of messages.
 */
import type { ChatRequest } from '../../../../shared/schemas/chat.ts'
import { pdfDataUrlPages } from '../../../core/pdf-pages.ts'
import type { Prompt } from '../../estimate.ts'

export function measureChatPrompt(body: ChatRequest, bodyBytes: number): Prompt {
  let images = 0
  let imageBytes = 0
  let pdfPages = 0
  for (const message of body.messages) {
    if (!Array.isArray(message.content)) continue
    for (const part of message.content as {
      type?: unknown
      image_url?: { url?: unknown }
      file?: { file_data?: unknown }
    }[]) {
      if (part?.type === 'file') pdfPages += pdfDataUrlPages(part.file?.file_data)
      if (part?.type !== 'image_url') continue
      images += 1
      const url = part.image_url?.url
      if (typeof url === 'string') imageBytes += url.length
    }
  }
  return {
    textBytes: Math.max(0, bodyBytes - imageBytes),
    images,
    pdfPages,
    messages: body.messages.length,
  }
}
