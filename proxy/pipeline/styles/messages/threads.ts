/**
 * Message threads (the Messages style's `message-threads` beta), kept by the gateway in the stored
 * conversations. A request with `thread` that completes (an answer, or a stream that reached
 * `message_stop`) keeps the thread under the reply's ID as Messages request fields: a create its
 * `system`, `tools`, and every message sent followed by the reply as the client received it; a continue
 * the messages it added and the reply, under the reply it continued. A `continue` loads the thread
 * of its account before anything is held, and the request goes on as the whole conversation: the kept
 * messages followed by the new ones, with the thread's `system` and `tools`. Providers of either style
 * receive that whole request, never the thread. The guardrail of the key that continues inspects and
 * redacts the kept messages too, as they reach the provider; what is kept is each turn as it was sent.
 */
import { ServiceError } from '../../../../shared/errors.ts'
import type { MessagesRequest } from '../../../../shared/schemas/messages.ts'
import type { ResponseStore } from '../../../stores/stored-responses.ts'
import type { AnswerContext, ClientStyle } from '../client-style.ts'
import { recordReply } from './reply-content.ts'
import { messagesContentTexts } from './texts.ts'
import { threadNotFound } from './thread-field.ts'
import type { StreamOutput } from '../../streams/stream-output.ts'

type Message = MessagesRequest['messages'][number]

/** A kept thread: Messages request fields, its last message the reply a continue names. */
export type StoredThread = {
  system?: MessagesRequest['system']
  tools?: MessagesRequest['tools']
  messages: Message[]
}

/** The fields a thread keeps from its create: a continue that sends them must send the same. */
const CREATE_ONLY = ['system', 'tools'] as const

/** The Messages style, keeping threads in `store`. */
export function withThreads(
  style: ClientStyle<MessagesRequest>,
  store: ResponseStore,
): ClientStyle<MessagesRequest> {
  /**
   * Per continued request: how many of its messages, and bytes, came from the thread. Keyed by the
   * messages array, which the pipeline's copies of the body (for counting tokens) share.
   */
  const held = new WeakMap<Message[], { messages: number; bytes: number }>()
  const passthrough = style.passthrough

  const keep = (context: AnswerContext<MessagesRequest>, id: unknown, content: unknown) => {
    const { body } = context
    if (!body.thread || typeof id !== 'string' || !Array.isArray(content)) return
    const reply: Message = { role: 'assistant', content: content as { type: string }[] }
    const whole = (): StoredThread => ({
      ...(body.system !== undefined ? { system: body.system } : {}),
      ...(body.tools !== undefined ? { tools: body.tools } : {}),
      messages: [...body.messages, reply],
    })
    const continued = held.get(body.messages)
    if (continued && body.thread.type === 'continue') {
      // What this turn adds, under the reply it continues.
      const added = { messages: [...body.messages.slice(continued.messages), reply] }
      store.save(
        id,
        context.accountId,
        'messages',
        added,
        {},
        {
          parentId: body.thread.previous_message_id,
          whole,
        },
      )
      return
    }
    store.save(id, context.accountId, 'messages', whole(), {})
  }
  /** A non-streaming answer, kept when the request is threaded. */
  const keptAnswer = (
    context: AnswerContext<MessagesRequest>,
    message: Record<string, unknown>,
  ) => {
    keep(context, message.id, message.content)
    return message
  }
  /** A stream whose reply is kept, once complete, when the request is threaded. */
  const keptStream = (context: AnswerContext<MessagesRequest>, output: StreamOutput) =>
    context.body.thread
      ? recordReply(output, (reply) => keep(context, reply.id, reply.content))
      : output
  /**
   * The request without the thread's messages and system prompt: what the client sent on this turn, with
   * the thread's tools (a continue may only send the same).
   */
  const ownPart = (body: MessagesRequest): MessagesRequest => {
    const thread = held.get(body.messages)
    if (!thread) return body
    return { ...body, system: undefined, messages: body.messages.slice(thread.messages) }
  }

  return {
    ...style,
    async prepare(body, accountId) {
      if (body.thread?.type !== 'continue') return undefined
      const thread = readThread(
        await store.conversation(body.thread.previous_message_id, accountId, 'messages'),
      )
      if (!thread)
        return threadNotFound(
          body.thread,
          store.options.retentionDays === 0
            ? 'this gateway keeps no threads'
            : `threads are kept ${store.options.retentionDays} days`,
        )
      for (const field of CREATE_ONLY)
        if (
          body[field] !== undefined &&
          JSON.stringify(body[field]) !== JSON.stringify(thread[field])
        )
          return new ServiceError(
            'invalid_request',
            `${field}: a continued thread keeps the ${field} it was created with; send none, or start a new thread (thread {"type": "create"}) with the whole conversation to change it`,
            { param: field },
          )
      if (thread.system !== undefined) body.system = thread.system
      if (thread.tools !== undefined) body.tools = thread.tools
      body.messages = [...thread.messages, ...body.messages]
      held.set(body.messages, {
        messages: thread.messages.length,
        bytes: JSON.stringify(thread).length,
      })
      return undefined
    },
    texts: (body, visit) => style.texts(ownPart(body), visit),
    keptTexts(body, visit) {
      const thread = held.get(body.messages)
      if (!thread) return
      const kept = { system: body.system, messages: body.messages.slice(0, thread.messages) }
      messagesContentTexts(kept as MessagesRequest, visit)
      // A system prompt given as a string is rewritten in the copy.
      if (kept.system !== undefined) body.system = kept.system
    },
    // The thread's bytes count as sent: the prompt is the whole conversation.
    measure: (body, bytes) => style.measure(body, bytes + (held.get(body.messages)?.bytes ?? 0)),
    renderAnswer: (answer, charged, context) =>
      keptAnswer(context, style.renderAnswer(answer, charged, context)),
    streamOutput: (context) => keptStream(context, style.streamOutput(context)),
    ...(passthrough && {
      passthrough: {
        ...passthrough,
        answer: (json, charged, context) =>
          keptAnswer(context, passthrough.answer(json, charged, context)),
        stream: (context) => keptStream(context, passthrough.stream(context)),
      },
    }),
  }
}

/**
 * A stored conversation as `keep` wrote it, the thread and then what each continue added, as one
 * thread; undefined for anything else.
 */
function readThread(parts: unknown[] | undefined): StoredThread | undefined {
  const stored = parts as Partial<StoredThread>[] | undefined
  if (!stored?.every((part) => typeof part === 'object' && Array.isArray(part?.messages)))
    return undefined
  const [first] = stored as StoredThread[]
  const messages = (stored as StoredThread[]).flatMap((part) => part.messages)
  if (!first || messages.length === 0) return undefined
  return {
    ...(first.system !== undefined ? { system: first.system } : {}),
    ...(first.tools !== undefined ? { tools: first.tools } : {}),
    messages,
  }
}
