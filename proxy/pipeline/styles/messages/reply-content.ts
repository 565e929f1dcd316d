/**
 * The reply of a Messages stream as the client assembles it: the events a stream output writes are read
 * back the way the SDK's message stream accumulates them (blocks started, their deltas applied, a tool
 * block's input parsed at its stop; thinking keeps its signature), so that a kept thread holds the reply
 * exactly as the client received it. Read only for requests that keep a thread.
 */
import { SseSplitter } from '../../../providers/sse.ts'
import type { StreamOutput } from '../../streams/stream-output.ts'
import { toolInput } from './answer.ts'

export type Block = Record<string, unknown> & { type?: unknown }

/** A stream's reply: its message ID and content blocks, once `message_stop` was written. */
export type StreamedReply = { id: string; content: Block[] }

type Event = {
  type?: string
  index?: number
  message?: { id?: unknown; content?: unknown }
  content_block?: Block
  delta?: Record<string, unknown> & { type?: string }
}

const takesInput = (block: Block | undefined) =>
  block?.type === 'tool_use' || block?.type === 'server_tool_use' || block?.type === 'mcp_tool_use'

/** `output`, with what it writes read back; `done` gets the reply of a stream that reached `message_stop`. */
export function recordReply(
  output: StreamOutput,
  done: (reply: StreamedReply) => void,
): StreamOutput {
  const splitter = new SseSplitter()
  const encoder = new TextEncoder()
  let id: string | undefined
  let content: Block[] = []
  const inputs = new Map<number, string>()
  let stopped = false

  const apply = (event: Event) => {
    const index = event.index ?? -1
    const block = content[index]
    switch (event.type) {
      case 'message_start':
        id = typeof event.message?.id === 'string' ? event.message.id : undefined
        content = Array.isArray(event.message?.content)
          ? (event.message.content as Block[]).map((start) => ({ ...start }))
          : []
        break
      case 'content_block_start':
        if (event.content_block) content[index] = { ...event.content_block }
        break
      case 'content_block_delta':
        if (block && event.delta) applyDelta(block, event.delta, index)
        break
      case 'content_block_stop':
        if (takesInput(block) && inputs.has(index)) block!.input = toolInput(inputs.get(index)!)
        break
      case 'message_stop':
        stopped = true
        break
    }
  }
  const applyDelta = (block: Block, delta: NonNullable<Event['delta']>, index: number) => {
    switch (delta.type) {
      case 'text_delta':
        if (block.type === 'text') block.text = String(block.text ?? '') + String(delta.text ?? '')
        break
      case 'citations_delta':
        if (block.type === 'text')
          block.citations = [...((block.citations as unknown[]) ?? []), delta.citation]
        break
      case 'input_json_delta':
        if (takesInput(block))
          inputs.set(index, (inputs.get(index) ?? '') + String(delta.partial_json ?? ''))
        break
      case 'thinking_delta':
        if (block.type === 'thinking')
          block.thinking = String(block.thinking ?? '') + String(delta.thinking ?? '')
        break
      case 'signature_delta':
        if (block.type === 'thinking') block.signature = delta.signature
        break
      case 'compaction_delta':
        if (block.type === 'compaction') {
          block.content = delta.content
          if ('encrypted_content' in delta) block.encrypted_content = delta.encrypted_content
        }
        break
    }
  }
  const read = (text: string) => {
    if (text === '') return text
    for (const event of splitter.push(encoder.encode(text))) {
      if (event.data === undefined) continue
      try {
        apply(JSON.parse(event.data) as Event)
      } catch {}
    }
    return text
  }

  return {
    event: (raw, events, accounting) => read(output.event(raw, events, accounting)),
    complete(final) {
      const text = read(output.complete(final))
      if (stopped && id !== undefined) done({ id, content: content.filter(Boolean) })
      return text
    },
    fail: (error, charged) => output.fail(error, charged),
  }
}
