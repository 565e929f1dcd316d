/**
 * An answer in neutral form: what the provider said (text, tool calls), why it stopped, and what it
 * counted; and the events a streamed answer is made of. Provider adapters decode into these; client
 * styles encode from them.
 */
import type { TokenUsage } from '../catalog/pricing.ts'

/** Why an answer ended, in the Chat Completions vocabulary (the mapping to the others is in WIRE terms). */
export type FinishReason = 'stop' | 'stop_sequence' | 'length' | 'tool_calls' | 'content_filter'

/**
 * `refusal`: the text is the model declining to answer (OpenAI's `refusal`), which a style that has a
 * place for it keeps apart from the answer's text; the others show it as text.
 */
export type AnswerPart =
  | { type: 'text'; text: string; refusal?: true }
  | { type: 'tool_call'; id: string; name: string; arguments: string }

export type Answer = {
  /** The provider's model name as it answered. */
  model: string
  parts: AnswerPart[]
  finish: FinishReason
  stopSequence: string | null
  usage: TokenUsage | undefined
}

export type StreamEvent =
  | { type: 'start'; model?: string }
  | { type: 'text'; text: string; refusal?: true }
  /** `index` is the tool call's ordinal in the answer (0, 1, …), whatever the provider numbers. */
  /**
   * `position`: where the provider left the call's `index` out, the call's place in its chunk's list, so
   * a stream passed through can write the index in.
   */
  | { type: 'tool_start'; index: number; id: string; name: string; position?: number }
  | { type: 'tool_arguments'; index: number; text: string; position?: number }
  | { type: 'finish'; reason: FinishReason; stopSequence: string | null }
  /** Cumulative: replaces what an earlier usage event said. */
  | { type: 'usage'; usage: TokenUsage }
  /** The provider's own end marker: the answer is complete. */
  | { type: 'end' }
  | { type: 'error'; message: string }
  /** A keep-alive (an SSE comment, a ping): nothing to say, but the provider is there. */
  | { type: 'keepalive' }

/** The decoding of a keep-alive (shared: nobody changes it). */
export const KEEPALIVE: StreamEvent[] = [{ type: 'keepalive' }]

/** The texts a client receives from these events (content, tool names and arguments), for counting output. */
export function deliveredText(events: StreamEvent[]): string[] {
  const texts: string[] = []
  for (const event of events) {
    const text =
      event.type === 'text' || event.type === 'tool_arguments'
        ? event.text
        : event.type === 'tool_start'
          ? event.name
          : ''
    if (text) texts.push(text)
  }
  return texts
}
