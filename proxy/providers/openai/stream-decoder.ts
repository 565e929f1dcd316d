/**
 * Chat Completions stream chunks in neutral form. Only the first choice is translated; tool calls keep
 * the provider's `index` as their ordinal. Some OpenAI-compatible servers leave `index` out (each call
 * whole in one delta): a call with a new `id` is then the next ordinal, a fragment without one belongs
 * to the last call. A `stop` after tool calls is the finish of a tool-call turn, as some servers say it.
 */
import { KEEPALIVE, type StreamEvent } from '../../core/neutral/answer.ts'
import type { StreamDecoder } from '../adapter.ts'
import type { SseEvent } from '../sse.ts'
import { chatFinish } from './read-answer.ts'
import { readChatUsage } from './usage.ts'

type Chunk = {
  model?: unknown
  choices?: {
    index?: number
    delta?: {
      content?: unknown
      refusal?: unknown
      tool_calls?: {
        index?: number
        id?: unknown
        function?: { name?: unknown; arguments?: unknown }
      }[]
    }
    finish_reason?: unknown
  }[]
  usage?: unknown
  error?: { message?: unknown }
}

export function chatStreamDecoder(): StreamDecoder {
  let started = false
  const toolsStarted = new Set<number>()
  /** Ordinals by call ID, for calls without `index`; the last call started. */
  const ordinals = new Map<string, number>()
  let lastTool: number | undefined
  return {
    decode(event: SseEvent): StreamEvent[] {
      const data = event.data
      if (data === undefined) return KEEPALIVE
      if (data === '') return []
      if (data === '[DONE]') return [{ type: 'end' }]
      let chunk: Chunk
      try {
        chunk = JSON.parse(data) as Chunk
      } catch {
        return [{ type: 'error', message: 'an unreadable stream event' }]
      }
      if (chunk.error)
        return [
          {
            type: 'error',
            message:
              typeof chunk.error.message === 'string' ? chunk.error.message : 'an error event',
          },
        ]
      const events: StreamEvent[] = []
      if (!started) {
        started = true
        events.push({
          type: 'start',
          model: typeof chunk.model === 'string' ? chunk.model : undefined,
        })
      }
      for (const choice of chunk.choices ?? []) {
        if ((choice.index ?? 0) !== 0) continue
        const delta = choice.delta
        const text = delta?.content
        if (typeof text === 'string' && text !== '') events.push({ type: 'text', text })
        const refusal = delta?.refusal
        if (typeof refusal === 'string' && refusal !== '')
          events.push({ type: 'text', text: refusal, refusal: true })
        for (const [place, call] of (delta?.tool_calls ?? []).entries()) {
          const position = typeof call.index === 'number' ? {} : { position: place }
          const index =
            typeof call.index === 'number'
              ? call.index
              : typeof call.id === 'string'
                ? (ordinals.get(call.id) ?? toolsStarted.size)
                : (lastTool ?? 0)
          if (
            !toolsStarted.has(index) &&
            typeof call.id === 'string' &&
            typeof call.function?.name === 'string'
          ) {
            toolsStarted.add(index)
            ordinals.set(call.id, index)
            lastTool = index
            events.push({
              type: 'tool_start',
              index,
              id: call.id,
              name: call.function.name,
              ...position,
            })
          }
          const fragment = call.function?.arguments
          if (typeof fragment === 'string' && fragment !== '')
            events.push({ type: 'tool_arguments', index, text: fragment, ...position })
        }
        if (choice.finish_reason)
          events.push({
            type: 'finish',
            reason: chatFinish(choice.finish_reason, toolsStarted.size > 0),
            stopSequence: null,
          })
      }
      const usage = readChatUsage(chunk.usage)
      if (usage) events.push({ type: 'usage', usage })
      return events
    },
  }
}
