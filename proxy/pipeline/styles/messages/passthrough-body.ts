/**
 * The body a Messages-style provider receives from a Messages client: the client's own, without the
 * gateway's `fallbacks` and `thread` (the gateway keeps threads: the body already holds the whole
 * conversation). System-role messages (SDK 1.x allows them inside `messages`) move to the
 * top-level `system`, which every version of the style accepts: the gateway pins the provider's version.
 * Tool-use IDs outside the style's alphabet (made by a provider of another style on an earlier turn,
 * such as `functions.get_weather:0`) are made valid as a translated request's are, the call and its
 * result alike.
 */
import type { MessagesRequest } from '../../../../shared/schemas/messages.ts'
import { toolUseId } from '../../../providers/anthropic/to-messages-body.ts'

type Block = { type?: unknown; text?: unknown; id?: unknown; tool_use_id?: unknown }
type Message = MessagesRequest['messages'][number]

export function messagesPassthroughBody(body: MessagesRequest): Record<string, unknown> {
  const { fallbacks: _fallbacks, thread: _thread, ...rest } = body
  const messages = withValidToolIds(body.messages)
  if (!messages.some((message) => message.role === 'system'))
    return messages === body.messages ? rest : { ...rest, messages }
  const system: Block[] =
    typeof body.system === 'string'
      ? [{ type: 'text', text: body.system }]
      : ((body.system as Block[] | undefined) ?? [])
  for (const message of messages) {
    if (message.role !== 'system') continue
    if (typeof message.content === 'string') system.push({ type: 'text', text: message.content })
    else system.push(...(message.content as Block[]))
  }
  return { ...rest, system, messages: messages.filter((message) => message.role !== 'system') }
}

/** The messages with every tool-use ID valid in the style; the same array when all are. */
function withValidToolIds(messages: Message[]): Message[] {
  const valid = (id: unknown) => typeof id !== 'string' || toolUseId(id) === id
  const invalid = (block: Block) =>
    (block?.type === 'tool_use' && !valid(block.id)) ||
    (block?.type === 'tool_result' && !valid(block.tool_use_id))
  const needs = (message: Message) =>
    Array.isArray(message.content) && (message.content as Block[]).some(invalid)
  if (!messages.some(needs)) return messages
  return messages.map((message) =>
    needs(message)
      ? ({
          ...message,
          content: (message.content as Block[]).map((block) =>
            !invalid(block)
              ? block
              : block.type === 'tool_use'
                ? { ...block, id: toolUseId(block.id as string) }
                : { ...block, tool_use_id: toolUseId(block.tool_use_id as string) },
          ),
        } as Message)
      : message,
  )
}
