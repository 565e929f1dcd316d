/**
 * A Messages request's content blocks in neutral form, for a provider of another style: text, images by
 * data or URL, plain-text documents as text (their title and context first) and PDF documents as files.
 * Any other block is refused naming it.
 */
import { ServiceError } from '../../../../shared/errors.ts'
import type { ContentPart } from '../../../core/neutral/conversation.ts'

export type Block = {
  type: string
  text?: unknown
  source?: {
    type?: unknown
    media_type?: unknown
    data?: unknown
    url?: unknown
    content?: unknown
  }
  title?: unknown
  context?: unknown
  id?: unknown
  name?: unknown
  input?: unknown
  tool_use_id?: unknown
  content?: unknown
  is_error?: unknown
}

/** A refusal of the request's field `param`. */
export const refuse = (param: string, message: string) =>
  new ServiceError('invalid_request', `${param}: ${message}`, { param })

export function contentParts(blocks: Block[], at: string): ContentPart[] | ServiceError {
  const parts: ContentPart[] = []
  for (const [index, block] of blocks.entries()) {
    // A tool result's blocks are not checked by the envelope's schema.
    if (typeof block !== 'object' || block === null)
      return refuse(blocks.length === 1 ? at : `${at}[${index}]`, 'must be a block object')
    if (block.type === 'text' && typeof block.text === 'string')
      parts.push({ type: 'text', text: block.text })
    else if (
      block.type === 'image' &&
      block.source?.type === 'base64' &&
      typeof block.source.data === 'string'
    ) {
      parts.push({
        type: 'image',
        url: `data:${String(block.source.media_type)};base64,${block.source.data}`,
      })
    } else if (
      block.type === 'image' &&
      block.source?.type === 'url' &&
      typeof block.source.url === 'string'
    ) {
      parts.push({ type: 'image', url: block.source.url })
    } else if (block.type === 'document' && documentText(block) !== undefined) {
      parts.push({ type: 'text', text: documentText(block)! })
    } else if (
      block.type === 'document' &&
      block.source?.type === 'base64' &&
      typeof block.source.data === 'string' &&
      String(block.source.media_type).toLowerCase() === 'application/pdf'
    ) {
      // A PDF (the style's only base64 document) goes as a file, named by its title; its context is
      // the text before it.
      if (typeof block.context === 'string' && block.context)
        parts.push({ type: 'text', text: block.context })
      parts.push({
        type: 'file',
        mediaType: 'application/pdf',
        data: block.source.data,
        ...(typeof block.title === 'string' && block.title ? { filename: block.title } : {}),
      })
    } else {
      return refuse(
        blocks.length === 1 ? at : `${at}[${index}]`,
        block.type === 'document'
          ? "only plain-text and PDF documents given inline can be sent to this model's provider (a document by URL or by file ID cannot)"
          : `blocks of type ${block.type} cannot be sent to this model's provider`,
      )
    }
  }
  return parts
}

/**
 * A plain-text document (a `text` source, or a `content` source of text) as the text the model reads:
 * its title and its context first, each as a paragraph of its own; undefined for any other document.
 */
function documentText(block: Block): string | undefined {
  const source = block.source
  let text: string | undefined
  if (source?.type === 'text' && typeof source.data === 'string') text = source.data
  else if (source?.type === 'content' && typeof source.content === 'string') text = source.content
  else if (source?.type === 'content' && Array.isArray(source.content)) {
    const blocks = source.content as Block[]
    if (blocks.every((inner) => inner?.type === 'text' && typeof inner.text === 'string'))
      text = blocks.map((inner) => inner.text).join('\n\n')
  }
  if (text === undefined) return undefined
  const heading = [block.title, block.context].filter((field) => typeof field === 'string' && field)
  return [...heading, text].join('\n\n')
}
