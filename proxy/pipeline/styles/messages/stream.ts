/**
 * Messages streams: named events encoded from neutral events (a provider of another style), or the
 * provider's own events passed through. Either way `message_delta` carries the usage with `cost`, and
 * `message_stop` ends a complete answer. Every event has its `event:` line: the SDK ignores events without.
 */
import type { ServiceError } from '../../../../shared/errors.ts'
import type { MessagesRequest } from '../../../../shared/schemas/messages.ts'
import { stopReasonFromFinish } from '../../../providers/anthropic/stop-reason.ts'
import { sse, type Final, type StreamOutput } from '../../streams/stream-output.ts'
import type { FinishReason } from '../../../core/neutral/answer.ts'
import type { AnswerContext } from '../client-style.ts'
import { messageId } from './answer.ts'
import { messagesError } from './render-error.ts'
import { messagesUsage } from './usage.ts'

const named = (type: string, data: Record<string, unknown>) =>
  sse(JSON.stringify({ type, ...data }), type)
const errorEvent = (error: ServiceError) => named('error', messagesError(error))
const messageStop = () => named('message_stop', {})

export function messagesStreamOutput(context: AnswerContext<MessagesRequest>): StreamOutput {
  let model = context.modelId
  let started = false
  let nextBlock = 0
  /**
   * The blocks not stopped yet, in index order. A block stops when the next one starts, except a tool
   * block that has no input yet: some providers start every parallel call before they stream the
   * arguments of any, which then take turns.
   */
  let open: { index: number; kind: 'text' | 'tool'; input?: boolean }[] = []
  const toolBlocks = new Map<number, number>()
  let finish: { reason: FinishReason; stopSequence: string | null } = {
    reason: 'stop',
    stopSequence: null,
  }

  const start = () => {
    if (started) return ''
    started = true
    const message = {
      id: messageId(context.requestId),
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
    }
    return named('message_start', {
      message: { ...message, usage: { input_tokens: 0, output_tokens: 0 } },
    })
  }
  /** Stops the open blocks; `keepWaiting`: not the tool blocks without input yet. */
  const close = (keepWaiting = false) => {
    const waiting = (block: (typeof open)[number]) =>
      keepWaiting && block.kind === 'tool' && !block.input
    const closing = open.filter((block) => !waiting(block))
    open = open.filter(waiting)
    return closing.map(({ index }) => named('content_block_stop', { index })).join('')
  }
  const begin = (kind: 'text' | 'tool', block: Record<string, unknown>) => {
    const out = close(true)
    const index = nextBlock++
    open.push({ index, kind })
    return out + named('content_block_start', { index, content_block: block })
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
            out += start()
            if (open.at(-1)?.kind !== 'text') out += begin('text', { type: 'text', text: '' })
            out += named('content_block_delta', {
              index: open.at(-1)!.index,
              delta: { type: 'text_delta', text: event.text },
            })
            break
          case 'tool_start':
            out +=
              start() +
              begin('tool', { type: 'tool_use', id: event.id, name: event.name, input: {} })
            toolBlocks.set(event.index, open.at(-1)!.index)
            break
          case 'tool_arguments': {
            const index = toolBlocks.get(event.index)
            const block = open.find((candidate) => candidate.index === index)
            if (block) block.input = true
            if (index !== undefined)
              out += named('content_block_delta', {
                index,
                delta: { type: 'input_json_delta', partial_json: event.text },
              })
            break
          }
          case 'finish':
            finish = { reason: event.reason, stopSequence: event.stopSequence }
            out += close()
            break
          case 'keepalive':
            // The style's own keep-alive; the SDKs skip it.
            out += named('ping', {})
            break
        }
      }
      return out
    },
    complete(final: Final) {
      const delta = {
        stop_reason: stopReasonFromFinish(finish.reason),
        stop_sequence: finish.stopSequence,
      }
      return (
        start() +
        close() +
        named('message_delta', { delta, usage: messagesUsage(final.usage, final.costUsd) }) +
        messageStop()
      )
    },
    fail: errorEvent,
  }
}

export function messagesPassthroughStream(): StreamOutput {
  let deltaSent = false
  /** The provider's stop, from a `message_delta` held back because it carried no usage to add the cost to. */
  let stop: unknown
  return {
    event(raw, events, accounting) {
      if (events.some((event) => event.type === 'end')) return ''
      if (events[0]?.type === 'start' && events.length === 1 && raw.data !== undefined) {
        // A start without usage, which the SDK's message would lack (its `message_delta` writes into it).
        const data = JSON.parse(raw.data) as { message?: Record<string, unknown> }
        if (data.message) data.message.usage = { input_tokens: 0, output_tokens: 0 }
        return sse(JSON.stringify(data), 'message_start')
      }
      if (events.some((e) => e.type === 'finish') && raw.data !== undefined && !accounting.usage) {
        // Without usage the SDK cannot read the event (it reads `usage.output_tokens`): it goes out
        // when the answer completes, with the gateway's count.
        stop = (JSON.parse(raw.data) as { delta?: unknown }).delta
        return ''
      }
      if (
        raw.data === undefined ||
        !accounting.usage ||
        !events.some((event) => event.type === 'usage')
      )
        return `${raw.raw}\n\n`
      const data = JSON.parse(raw.data) as Record<string, unknown> & {
        usage?: Record<string, unknown>
      }
      if (data.type !== 'message_delta') return `${raw.raw}\n\n`
      deltaSent = true
      data.usage = { ...data.usage, cost: accounting.costUsd(accounting.usage) }
      return sse(JSON.stringify(data), 'message_delta')
    },
    complete(final: Final) {
      if (deltaSent) return messageStop()
      // The provider ended without a usage report: the client still gets one, with the gateway's count.
      return (
        named('message_delta', {
          delta: stop ?? { stop_reason: 'end_turn', stop_sequence: null },
          usage: messagesUsage(final.usage, final.costUsd),
        }) + messageStop()
      )
    },
    fail: errorEvent,
  }
}
