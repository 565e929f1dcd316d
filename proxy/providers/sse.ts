/**
 * Server-sent events framing: bytes in, whole events out, as they complete. An event keeps its raw text
 * so a relay can forward it unchanged and re-encode only the events it rewrites.
 */

export type SseEvent = {
  /** The event's lines without the blank line that ends it. */
  raw: string
  /** `event:` field, if any. */
  event: string | undefined
  /** `data:` lines joined with "\n"; undefined for comment-only events (keep-alives). */
  data: string | undefined
}

export class SseSplitter {
  private buffer = ''
  private readonly decoder = new TextDecoder()

  /** Appends bytes and returns the events they complete. */
  push(chunk: Uint8Array): SseEvent[] {
    this.buffer += this.decoder.decode(chunk, { stream: true })
    if (this.buffer.includes('\r')) this.buffer = this.buffer.replace(/\r\n?/g, '\n')
    const events: SseEvent[] = []
    let end = this.buffer.indexOf('\n\n')
    while (end !== -1) {
      const raw = this.buffer.slice(0, end)
      this.buffer = this.buffer.slice(end + 2)
      if (raw.length > 0) events.push(parseEvent(raw))
      end = this.buffer.indexOf('\n\n')
    }
    return events
  }

  /** Whatever is left when the stream ends (an event without its closing blank line). */
  flush(): SseEvent[] {
    const rest = (this.buffer + this.decoder.decode()).trim()
    this.buffer = ''
    return rest ? [parseEvent(rest)] : []
  }
}

function parseEvent(raw: string): SseEvent {
  let event: string | undefined
  let data: string | undefined
  for (const line of raw.split('\n')) {
    if (line.startsWith('data:')) {
      const value = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5)
      data = data === undefined ? value : `${data}\n${value}`
    } else if (line.startsWith('event:')) {
      event = line.slice(6).trim()
    }
  }
  return { raw, event, data }
}

const encoder = new TextEncoder()

export function encodeEvent(raw: string): Uint8Array {
  return encoder.encode(`${raw}\n\n`)
}
