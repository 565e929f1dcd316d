/**
 * The body a Messages-style provider receives from a Messages client: the client's own, without the
 * gateway's `fallbacks`. System-role messages (SDK 1.x allows them inside `messages`) move to the
 * top-level `system`, which every version of the style accepts: the gateway pins the provider's version.
 */
import type { MessagesRequest } from '../../../../shared/schemas/messages.ts'

type Block = { type?: unknown; text?: unknown }

export function messagesPassthroughBody(body: MessagesRequest): Record<string, unknown> {
  const { fallbacks: _fallbacks, ...rest } = body
  if (!body.messages.some((message) => message.role === 'system')) return rest
  const system: Block[] =
    typeof body.system === 'string'
      ? [{ type: 'text', text: body.system }]
      : ((body.system as Block[] | undefined) ?? [])
  for (const message of body.messages) {
    if (message.role !== 'system') continue
    if (typeof message.content === 'string') system.push({ type: 'text', text: message.content })
    else system.push(...(message.content as Block[]))
  }
  return { ...rest, system, messages: body.messages.filter((message) => message.role !== 'system') }
}
