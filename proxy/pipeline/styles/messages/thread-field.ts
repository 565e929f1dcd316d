/**
 * The Messages style's `thread` field (the `message-threads` beta): its form, the refusal of a continue
 * whose thread is not kept, and what of it a provider never sees: neither the field nor its beta reach a
 * provider, which is sent whole conversations.
 */
import { ServiceError } from '../../../../shared/errors.ts'
import type { MessagesThread } from '../../../../shared/schemas/messages.ts'

/** The beta that enables threads; a client's `anthropic-beta` keeps its other values. */
const THREADS_BETA = /^message-threads-/

/** Why `thread` is not `{type: "create"}` or `{type: "continue", previous_message_id}`, if it is not. */
export function threadRefusal(thread: unknown): ServiceError | undefined {
  if (thread === undefined) return undefined
  const refuse = (param: string, message: string) =>
    new ServiceError('invalid_request', `${param}: ${message}`, { param })
  if (typeof thread !== 'object' || thread === null || Array.isArray(thread))
    return refuse('thread', 'must be an object, {"type": "create"} or {"type": "continue", …}')
  const { type, previous_message_id: previous, ...rest } = thread as Record<string, unknown>
  if (type !== 'create' && type !== 'continue')
    return refuse('thread.type', 'must be "create" or "continue"')
  if (type === 'continue' && (typeof previous !== 'string' || previous === ''))
    return refuse('thread.previous_message_id', 'is required, the ID of the reply to continue from')
  if (type === 'create' && previous !== undefined)
    return refuse('thread.previous_message_id', 'Extra inputs are not permitted with type "create"')
  const extra = Object.keys(rest)[0]
  if (extra !== undefined) return refuse(`thread.${extra}`, 'Extra inputs are not permitted')
  return undefined
}

/** A continue whose thread the gateway does not hold: the SDK replays the whole history on this code. */
export function threadNotFound(thread: MessagesThread & { type: 'continue' }, kept: string) {
  return new ServiceError(
    'not_found',
    `thread.previous_message_id: no thread ends at message ${thread.previous_message_id} (${kept}); send the whole conversation with thread {"type": "create"}`,
    { param: 'thread.previous_message_id', errorDetails: { error_code: 'thread_not_found' } },
  )
}

/** The client's `anthropic-beta` as a provider receives it: without the threads beta; undefined if empty. */
export function providerBetas(value: string): string | undefined {
  if (!value.includes('message-threads-')) return value
  const kept = value
    .split(',')
    .map((beta) => beta.trim())
    .filter((beta) => beta !== '' && !THREADS_BETA.test(beta))
  return kept.length > 0 ? kept.join(',') : undefined
}
