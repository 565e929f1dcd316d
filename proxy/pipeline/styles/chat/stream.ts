/**
 * Chat Completions streams: chunks encoded from neutral events (a provider of another style), or the
 * provider's own chunks passed through. Either way the usage chunk (`choices: []`) carries `cost` and
 * comes only when the client asked (`stream_options.include_usage`), and `[DONE]` ends a complete answer.
 */
import type { ServiceError } from '../../../../shared/errors.ts'
import type { ChatRequest } from '../../../../shared/schemas/chat.ts'
import {
  KEEP_ALIVE_COMMENT,
  sse,
  type Final,
  type StreamOutput,
} from '../../streams/stream-output.ts'
import type { TokenUsage } from '../../../core/catalog/pricing.ts'
import type { AnswerContext } from '../client-style.ts'
import { chatFinishReason, chatId } from './answer.ts'
import { legacyFinishReason, usesLegacyFunctions } from './legacy-functions.ts'
import { chatErrorBody } from './render-error.ts'
import { chatUsage } from './usage.ts'

const includesUsage = (body: ChatRequest) => body.stream_options?.include_usage === true
const errorEvent = (error: ServiceError) => sse(chatErrorBody(error))

export function chatStreamOutput(context: AnswerContext<ChatRequest>): StreamOutput {
  let model = context.modelId
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    sse(
      JSON.stringify({
        id: chatId(context.requestId),
        object: 'chat.completion.chunk',
        created: context.created,
        model,
        choices,
        ...extra,
      }),
    )
  // With usage asked for, every chunk before the usage chunk says `usage: null`, as the style's do.
  const noUsage = includesUsage(context.body) ? { usage: null } : {}
  const delta = (value: Record<string, unknown>, finish: string | null = null) =>
    chunk([{ index: 0, delta: value, logprobs: null, finish_reason: finish }], noUsage)
  // A legacy client gets the first call as `function_call`; it has no place for others.
  const legacy = usesLegacyFunctions(context.body)
  const call = (index: number, id: string | undefined, fn: Record<string, unknown>) => {
    if (legacy) return index === 0 ? delta({ function_call: fn }) : ''
    const head = id === undefined ? {} : { id, type: 'function' }
    return delta({ tool_calls: [{ index, ...head, function: fn }] })
  }
  let started = false
  const start = () => {
    if (started) return ''
    started = true
    return delta({ role: 'assistant', content: '' })
  }
  return {
    event(_raw, events) {
      let out = ''
      for (const event of events) {
        switch (event.type) {
          case 'start':
            if (event.model) model = event.model
            out += start()
            break
          case 'text':
            out += start() + delta({ content: event.text })
            break
          case 'tool_start':
            out += start() + call(event.index, event.id, { name: event.name, arguments: '' })
            break
          case 'tool_arguments':
            out += call(event.index, undefined, { arguments: event.text })
            break
          case 'finish': {
            const finish = chatFinishReason(event.reason)
            out += start() + delta({}, legacy ? legacyFinishReason(finish) : finish)
            break
          }
          case 'keepalive':
            out += KEEP_ALIVE_COMMENT
            break
        }
      }
      return out
    },
    complete(final: Final) {
      const usage = includesUsage(context.body)
        ? chunk([], { usage: chatUsage(final.usage, final.costUsd) })
        : ''
      return `${start()}${usage}data: [DONE]\n\n`
    },
    fail: errorEvent,
  }
}

export function chatPassthroughStream(context: AnswerContext<ChatRequest>): StreamOutput {
  // The first chunks, kept unread: a usage chunk the gateway writes takes its id from them.
  const first: string[] = []
  let usageSent = false
  return {
    event(raw, events, accounting) {
      if (events.some((event) => event.type === 'end')) return ''
      if (first.length < META_READS && raw.data !== undefined) first.push(raw.data)
      // Most events are forwarded as they came: one pass finds those that are not.
      let unindexed: { index: number; position: number }[] | undefined
      let usage: TokenUsage | undefined
      for (const event of events) {
        if (event.type === 'usage') usage = accounting.usage
        else if (
          (event.type === 'tool_start' || event.type === 'tool_arguments') &&
          event.position !== undefined
        )
          (unindexed ??= []).push({ index: event.index, position: event.position })
      }
      if ((!usage && !unindexed) || raw.data === undefined) return `${raw.raw}\n\n`
      const chunk = JSON.parse(raw.data) as Record<string, unknown> & { choices?: Choice[] }
      // Calls the provider sent without `index` (each whole in one delta) get the one the gateway gave
      // them: the SDKs' stream helpers refuse a call without it.
      const calls = chunk.choices?.find((choice) => (choice.index ?? 0) === 0)?.delta?.tool_calls
      for (const { index, position } of unindexed ?? []) {
        const call = calls?.[position]
        if (call) call.index = index
      }
      if (!usage) return sse(JSON.stringify(chunk))
      if (includesUsage(context.body)) {
        usageSent = true
        chunk.usage = {
          ...(chunk.usage as Record<string, unknown>),
          cost: accounting.costUsd(usage),
        }
        return sse(JSON.stringify(chunk))
      }
      // The gateway asked for usage; the client did not: the chunk goes without it.
      if (!chunk.choices || chunk.choices.length === 0) return ''
      delete chunk.usage
      return sse(JSON.stringify(chunk))
    },
    complete(final: Final) {
      if (!includesUsage(context.body) || usageSent) return 'data: [DONE]\n\n'
      // The provider reported no usage: the client still gets a usage chunk, with the gateway's count.
      const meta = streamMeta(first, context)
      const usage = {
        id: meta.id,
        object: 'chat.completion.chunk',
        created: meta.created,
        model: meta.model,
        choices: [],
        usage: chatUsage(final.usage, final.costUsd),
      }
      return `${sse(JSON.stringify(usage))}data: [DONE]\n\n`
    },
    fail: errorEvent,
  }
}

type Choice = { index?: number; delta?: { tool_calls?: { index?: number }[] } }

/** Chunks kept for the stream's id at most: a provider that sends none is not read to the end. */
const META_READS = 4

/**
 * The id, created and model every chunk repeats, which a usage chunk the gateway writes must repeat too
 * (the SDK's accumulator drops a later chunk without the stream's id): the provider's, from its first
 * chunk that has an id (Azure's first, of prompt filter results, has an empty one), else the gateway's.
 */
function streamMeta(first: string[], context: AnswerContext<ChatRequest>): Record<string, unknown> {
  const meta: Record<string, unknown> = {
    id: chatId(context.requestId),
    created: context.created,
    model: context.modelId,
  }
  for (const data of first) {
    let chunk: Record<string, unknown>
    try {
      chunk = JSON.parse(data) as Record<string, unknown>
    } catch {
      continue
    }
    if (typeof chunk.created === 'number' && chunk.created > 0) meta.created = chunk.created
    if (typeof chunk.model === 'string' && chunk.model !== '') meta.model = chunk.model
    if (typeof chunk.id === 'string' && chunk.id !== '') {
      meta.id = chunk.id
      break
    }
  }
  return meta
}
