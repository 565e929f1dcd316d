/**
 * Messages streams: named events encoded from neutral events (a provider of another style), or the
 * provider's own events passed through. Either way `message_delta` carries the usage with `cost`, and
 * `message_stop` ends a complete answer. Every event has its `event:` line: the SDK ignores events without.
 */
import type { ServiceError } from '../../../../shared/errors.ts'
import type { MessagesRequest } from '../../../../shared/schemas/messages.ts'
import { argumentsWhole, sse, type Final, type StreamOutput } from '../../streams/stream-output.ts'
import type { FinishReason } from '../../../core/neutral/answer.ts'
import type { AnswerContext } from '../client-style.ts'
import { toolUseId } from '../../../providers/anthropic/to-messages-body.ts'
import { messageId, messagesStopReason } from './answer.ts'
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
   * The blocks not stopped yet, in order. Only the first is started (it has its index): the style's
   * blocks follow one another, so a block that begins while another is still going waits, its deltas
   * kept, until that one is done. A text block is done when another block begins; a tool block once its
   * arguments are whole JSON, as some providers start a parallel call before the previous one's
   * arguments are complete and then stream the fragments of both in turns.
   */
  let blocks: Block[] = []
  const toolBlocks = new Map<number, Block>()
  /** Whether the provider refused (an OpenAI-style `refusal`): the answer then stops as `refusal`. */
  let refused = false
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
  const delta = (index: number, kind: Block['kind'], text: string) =>
    named('content_block_delta', {
      index,
      delta:
        kind === 'text'
          ? { type: 'text_delta', text }
          : { type: 'input_json_delta', partial_json: text },
    })
  /**
   * Writes what the blocks allow: the first one started and its kept deltas sent, then stopped and the
   * next one written if another follows it and it is done (`all`: the answer ended, every block is).
   * The last block written stays open unless `all`.
   */
  const write = (all = false) => {
    let out = ''
    for (;;) {
      const first = blocks[0]
      if (!first) return out
      if (first.index === undefined) {
        first.index = nextBlock++
        out += named('content_block_start', { index: first.index, content_block: first.block })
      }
      for (const text of first.deltas) out += delta(first.index, first.kind, text)
      first.deltas = []
      if (!all && blocks.length === 1) return out
      if (!all && first.kind === 'tool' && !argumentsWhole(first.arguments)) return out
      if (all && blocks.length === 1 && first.stopped === 'open') return out
      out += named('content_block_stop', { index: first.index })
      first.stopped = 'stopped'
      blocks.shift()
    }
  }
  /** Stops every block, the waiting ones written first. */
  const close = () => {
    const out = write(true)
    blocks = []
    return out
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
          case 'text': {
            if (event.refusal) refused = true
            out += start()
            let block = blocks.at(-1)
            if (block?.kind !== 'text') {
              block = newBlock('text', { type: 'text', text: '' })
              blocks.push(block)
            }
            block.deltas.push(event.text)
            out += write()
            break
          }
          case 'tool_start': {
            out += start()
            const block = newBlock('tool', {
              type: 'tool_use',
              // Another style's provider may name calls outside this style's alphabet.
              id: toolUseId(event.id),
              name: event.name,
              input: {},
            })
            blocks.push(block)
            toolBlocks.set(event.index, block)
            out += write()
            break
          }
          case 'tool_arguments': {
            const block = toolBlocks.get(event.index)
            // A stopped block's arguments were whole: nothing can follow them.
            if (!block || block.stopped === 'stopped') break
            block.arguments += event.text
            block.deltas.push(event.text)
            out += write()
            break
          }
          case 'finish':
            finish = { reason: event.reason, stopSequence: event.stopSequence }
            out += close()
            break
          case 'keepalive':
            // The style's own keep-alive; the SDKs skip it. A stream of the style begins with its
            // `message_start`: one before it is not written (it comes with the first event anyway).
            if (started) out += named('ping', {})
            break
        }
      }
      return out
    },
    complete(final: Final) {
      const delta = {
        stop_reason: messagesStopReason(finish.reason, refused),
        stop_sequence: finish.stopSequence,
      }
      return (
        start() +
        close() +
        named('message_delta', { delta, usage: messagesUsage(final.usage, final.costUsd) }) +
        messageStop()
      )
    },
    fail(error: ServiceError) {
      // What was counted as delivered reaches the client: the waiting blocks are written, the last
      // one left open, as the answer broke off in it.
      const last = blocks.at(-1)
      if (last) last.stopped = 'open'
      const out = write(true)
      blocks = []
      return out + errorEvent(error)
    },
  }
}

type Block = {
  kind: 'text' | 'tool'
  /** The `content_block_start` block. */
  block: Record<string, unknown>
  /** The block's index, once started. */
  index?: number
  /** Deltas not sent yet. */
  deltas: string[]
  /** A tool block's arguments so far. */
  arguments: string
  /** `open`: left open when the stream fails. */
  stopped?: 'stopped' | 'open'
}

const newBlock = (kind: Block['kind'], block: Record<string, unknown>): Block => ({
  kind,
  block,
  deltas: [],
  arguments: '',
})

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
