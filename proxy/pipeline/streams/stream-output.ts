/**
 * What a client style writes into a relayed stream. A translated output encodes the neutral events; a
 * same-style output forwards the provider's events as they are and rewrites only the one that carries
 * usage (to add the cost) and the end marker (sent once the answer is complete).
 */
import type { ServiceError } from '../../../shared/errors.ts'
import type { TokenUsage } from '../../core/catalog/pricing.ts'
import type { StreamEvent } from '../../core/neutral/answer.ts'
import type { SseEvent } from '../../providers/sse.ts'

export type Accounting = {
  /** The provider's latest usage report, if any. */
  usage: TokenUsage | undefined
  /** The charge (USD) of that usage, capped at the hold. */
  costUsd(usage: TokenUsage): number
}

export type Final = {
  usage: TokenUsage
  costUsd: number
  /** Whether the provider reported the usage (else it is the gateway's count). */
  reported: boolean
}

/** What a stream that did not complete is charged for. */
export type Charged = { usage: TokenUsage; costUsd: number }

export type StreamOutput = {
  /** The text to send for one provider event; '' to send nothing. */
  event(raw: SseEvent, events: StreamEvent[], accounting: Accounting): string
  /** The closing events of a complete answer. */
  complete(final: Final): string
  /**
   * The error event of a stream that failed after it began (no end marker follows); `charged`: what the
   * delivered part is charged (nothing below the write-off), for a style whose failure carries usage.
   */
  fail(error: ServiceError, charged: Charged): string
}

/**
 * Whether a tool call's streamed arguments are whole: a JSON value that parses. Until then more
 * fragments may follow, also after another call started (parallel calls whose fragments take turns).
 */
export function argumentsWhole(text: string): boolean {
  const end = text.trimEnd().at(-1)
  if (end !== '}' && end !== ']') return false
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/** An SSE comment: every SSE reader skips it, and it keeps the connection and its proxies awake. */
export const KEEP_ALIVE_COMMENT = ': keep-alive\n\n'

/** Frames one SSE event: an optional name and one data line. */
export function sse(data: string, event?: string): string {
  return event ? `event: ${event}\ndata: ${data}\n\n` : `data: ${data}\n\n`
}
