/**
 * Messages-style stream events in neutral form. Content blocks are numbered among all blocks; tool calls
 * get their own ordinal. Usage comes in two parts: input in `message_start`, output (cumulative) in
 * `message_delta`, which may also restate input. A tool call with no input streams no JSON (an empty
 * `partial_json` at most): its arguments are the block's own `input` (`{}`), sent when the block stops,
 * so every style's client receives a JSON string.
 */
import type { TokenUsage } from '../../core/catalog/pricing.ts'
import { KEEPALIVE, type StreamEvent } from '../../core/neutral/answer.ts'
import type { StreamDecoder } from '../adapter.ts'
import type { SseEvent } from '../sse.ts'
import { finishFromStopReason } from './stop-reason.ts'
import { readMessagesUsage } from './usage.ts'

type Data = {
  type?: string
  message?: { model?: unknown; usage?: unknown }
  index?: number
  content_block?: { type?: string; id?: unknown; name?: unknown; input?: unknown }
  delta?: {
    type?: string
    text?: unknown
    partial_json?: unknown
    stop_reason?: unknown
    stop_sequence?: unknown
  }
  usage?: unknown
  error?: { message?: unknown }
}

export function messagesStreamDecoder(): StreamDecoder {
  let usage: TokenUsage | undefined
  let tools = 0
  /** Tool blocks by block index: their ordinal, and their start's input until JSON is streamed. */
  const toolBlocks = new Map<number, { ordinal: number; input: string | undefined }>()
  return {
    decode(event: SseEvent): StreamEvent[] {
      if (event.data === undefined) return KEEPALIVE
      if (event.data === '') return []
      let data: Data
      try {
        data = JSON.parse(event.data) as Data
      } catch {
        return [{ type: 'error', message: 'an unreadable stream event' }]
      }
      switch (data.type ?? event.event) {
        case 'message_start': {
          // Its output count (1, before any content) is not the answer's: a stream left or broken before
          // its first delta has delivered no output, and is not charged for any.
          const started = readMessagesUsage(data.message?.usage)
          usage = started && { ...started, outputTokens: 0 }
          const start: StreamEvent = {
            type: 'start',
            model: typeof data.message?.model === 'string' ? data.message.model : undefined,
          }
          return usage ? [start, { type: 'usage', usage }] : [start]
        }
        case 'content_block_start': {
          const block = data.content_block
          if (
            block?.type !== 'tool_use' ||
            typeof block.id !== 'string' ||
            typeof block.name !== 'string'
          )
            return []
          const index = tools++
          toolBlocks.set(data.index ?? 0, { ordinal: index, input: startInput(block.input) })
          return [{ type: 'tool_start', index, id: block.id, name: block.name }]
        }
        case 'content_block_delta': {
          const delta = data.delta
          if (delta?.type === 'text_delta' && typeof delta.text === 'string')
            return [{ type: 'text', text: delta.text }]
          if (
            delta?.type === 'input_json_delta' &&
            typeof delta.partial_json === 'string' &&
            delta.partial_json !== ''
          ) {
            const tool = toolBlocks.get(data.index ?? 0)
            if (tool) tool.input = undefined
            return [{ type: 'tool_arguments', index: tool?.ordinal ?? 0, text: delta.partial_json }]
          }
          return []
        }
        case 'content_block_stop': {
          const tool = toolBlocks.get(data.index ?? 0)
          if (tool?.input === undefined) return []
          const text = tool.input
          tool.input = undefined
          return [{ type: 'tool_arguments', index: tool.ordinal, text }]
        }
        case 'message_delta': {
          const events: StreamEvent[] = []
          if (data.delta?.stop_reason) {
            const stopSequence =
              typeof data.delta.stop_sequence === 'string' ? data.delta.stop_sequence : null
            events.push({
              type: 'finish',
              reason: finishFromStopReason(data.delta.stop_reason),
              stopSequence,
            })
          }
          usage = readMessagesUsage(data.usage, usage)
          if (usage) events.push({ type: 'usage', usage })
          return events
        }
        case 'message_stop':
          return [{ type: 'end' }]
        case 'ping':
          return KEEPALIVE
        case 'error':
          return [
            {
              type: 'error',
              message:
                typeof data.error?.message === 'string' ? data.error.message : 'an error event',
            },
          ]
        default:
          return []
      }
    },
  }
}

/** The input a `tool_use` block starts with, as arguments text: `{}` unless the provider filled it in. */
function startInput(input: unknown): string {
  return typeof input === 'object' && input !== null && !Array.isArray(input)
    ? JSON.stringify(input)
    : '{}'
}
