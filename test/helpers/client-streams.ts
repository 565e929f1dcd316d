/**
 * Reads a client-style stream as a client would: the kind of every event in order (for event-by-event
 * checks) and what the events add up to (text, tool calls, finish, usage, cost, error). Each reader also
 * checks the style's own rules: named events matching their `type`, increasing sequence numbers.
 */
import { expect } from 'bun:test'

export type Summary = {
  kinds: string[]
  text: string
  tools: { id: string; name: string; arguments: string }[]
  finish: string | null
  usage: { input: number; cached: number; output: number } | null
  cost: number | null
  error: string | null
  errorMessage: string | null
}

type Frame = { event: string | undefined; data: string }

/** The stream's events, without comments (keep-alives), which every SSE reader skips. */
function frames(text: string): Frame[] {
  return text
    .split('\n\n')
    .map((block): { event: string | undefined; data: string | undefined } => {
      const lines = block.split('\n')
      const event = lines.find((line) => line.startsWith('event: '))?.slice(7)
      const data = lines.filter((line) => line.startsWith('data: ')).map((line) => line.slice(6))
      return { event, data: data.length > 0 ? data.join('\n') : undefined }
    })
    .filter((frame): frame is Frame => frame.data !== undefined)
}

const empty = (): Summary => ({
  kinds: [],
  text: '',
  tools: [],
  finish: null,
  usage: null,
  cost: null,
  error: null,
  errorMessage: null,
})

export function readChatStream(text: string): Summary {
  const summary = empty()
  for (const frame of frames(text)) {
    if (frame.data === '[DONE]') {
      summary.kinds.push('[DONE]')
      continue
    }
    const chunk = JSON.parse(frame.data)
    if (chunk.error) {
      summary.kinds.push('error')
      summary.error = chunk.error.code
      summary.errorMessage = chunk.error.message
      continue
    }
    if (chunk.choices.length === 0 && chunk.usage) {
      summary.kinds.push('usage')
      summary.usage = {
        input: chunk.usage.prompt_tokens,
        cached: chunk.usage.prompt_tokens_details?.cached_tokens ?? 0,
        output: chunk.usage.completion_tokens,
      }
      summary.cost = chunk.usage.cost ?? null
      continue
    }
    expect(chunk.object).toBe('chat.completion.chunk')
    const choice = chunk.choices[0]
    const delta = choice.delta ?? {}
    if (delta.role) summary.kinds.push('role')
    if (delta.content) {
      summary.kinds.push('text')
      summary.text += delta.content
    }
    for (const call of delta.tool_calls ?? []) {
      if (call.id) {
        summary.kinds.push(`tool:${call.index}`)
        summary.tools[call.index] = {
          id: call.id,
          name: call.function.name,
          arguments: call.function.arguments ?? '',
        }
      } else {
        summary.kinds.push(`args:${call.index}`)
        summary.tools[call.index]!.arguments += call.function.arguments
      }
    }
    if (choice.finish_reason) {
      summary.kinds.push(`finish:${choice.finish_reason}`)
      summary.finish = choice.finish_reason
    }
  }
  return summary
}

export function readMessagesStream(text: string): Summary {
  const summary = empty()
  const blocks: { type: string; id?: string; name?: string; text: string }[] = []
  let usage: Record<string, number> = {}
  for (const frame of frames(text)) {
    const data = JSON.parse(frame.data)
    expect(frame.event).toBe(data.type)
    switch (data.type) {
      case 'message_start':
        summary.kinds.push('message_start')
        usage = { ...data.message.usage }
        break
      case 'content_block_start':
        summary.kinds.push(`block_start:${data.content_block.type}`)
        expect(data.index).toBe(blocks.length)
        blocks.push({
          type: data.content_block.type,
          id: data.content_block.id,
          name: data.content_block.name,
          text: '',
        })
        break
      case 'content_block_delta':
        summary.kinds.push(data.delta.type)
        blocks[data.index]!.text += data.delta.text ?? data.delta.partial_json
        break
      case 'message_delta':
        summary.kinds.push(`message_delta:${data.delta.stop_reason}`)
        summary.finish = data.delta.stop_reason
        // As the SDK does: a count in message_delta replaces the one from message_start.
        for (const [field, value] of Object.entries(data.usage))
          if (value !== null) usage[field] = value as number
        summary.cost = data.usage.cost ?? null
        break
      case 'content_block_stop':
        summary.kinds.push('block_stop')
        break
      case 'error':
        summary.kinds.push('error')
        summary.error = data.error.code
        summary.errorMessage = data.error.message
        break
      default:
        summary.kinds.push(data.type)
    }
  }
  summary.text = blocks
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('')
  summary.tools = blocks
    .filter((block) => block.type === 'tool_use')
    .map((block) => ({ id: block.id!, name: block.name!, arguments: block.text }))
  if (summary.finish) {
    const cached = usage.cache_read_input_tokens ?? 0
    summary.usage = {
      input: (usage.input_tokens ?? 0) + cached + (usage.cache_creation_input_tokens ?? 0),
      cached,
      output: usage.output_tokens ?? 0,
    }
  }
  return summary
}

export function readResponsesStream(text: string): Summary {
  const summary = empty()
  const calls = new Map<number, Summary['tools'][number]>()
  let added = 0
  frames(text).forEach((frame, index) => {
    const data = JSON.parse(frame.data)
    expect(frame.event).toBe(data.type)
    expect(data.sequence_number).toBe(index)
    summary.kinds.push(data.type.replace(/^response\./, ''))
    if (data.type === 'error') {
      summary.error = data.code
      summary.errorMessage = data.message
    }
    if (data.type === 'response.failed')
      expect(data.response).toMatchObject({ status: 'failed', error: { code: expect.any(String) } })
    if (data.type === 'response.output_text.delta') summary.text += data.delta
    if (data.type === 'response.output_item.added') {
      // Items are added in order: 0, 1, 2…
      expect(data.output_index).toBe(added++)
      if (data.item.type === 'function_call')
        calls.set(data.output_index, { id: data.item.call_id, name: data.item.name, arguments: '' })
    }
    if (data.type === 'response.function_call_arguments.delta')
      calls.get(data.output_index)!.arguments += data.delta
    if (data.type === 'response.completed' || data.type === 'response.incomplete') {
      const response = data.response
      summary.finish =
        response.status === 'incomplete'
          ? `incomplete:${response.incomplete_details.reason}`
          : response.status
      // The final response holds what the events built up.
      const final = response.output.map(
        (item: {
          type: string
          content?: { text: string }[]
          call_id?: string
          name?: string
          arguments?: string
        }) =>
          item.type === 'message'
            ? item.content!.map((part) => part.text).join('')
            : { id: item.call_id, name: item.name, arguments: item.arguments },
      )
      expect(final.filter((item: unknown) => typeof item === 'string').join('')).toBe(summary.text)
      expect(final.filter((item: unknown) => typeof item !== 'string')).toEqual([...calls.values()])
      summary.usage = {
        input: response.usage.input_tokens,
        cached: response.usage.input_tokens_details.cached_tokens,
        output: response.usage.output_tokens,
      }
      summary.cost = response.usage.cost
    }
  })
  summary.tools = [...calls.values()]
  return summary
}
