/** The size of a Messages prompt for the estimate: body bytes without image data, images, messages. */
import type { MessagesRequest } from '../../../../shared/schemas/messages.ts'
import type { Prompt } from '../../estimate.ts'

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
  return { textBytes: Math.max(0, bodyBytes - imageBytes), images, messages: body.messages.length }
}
