/**
 * Server-sent events framing: bytes in, whole events out, as they complete, however the network cut
 * them: an event, a line, a CRLF pair or a UTF-8 character may arrive in pieces. An event keeps its raw
 * text (lines ending in "\n") so a relay can forward it unchanged and re-encode only what it rewrites.
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
  /** A chunk ended in "\r": whether a "\n" follows decides the line ending, so it waits for the next chunk. */
  private carriageReturn = false
  private readonly decoder = new TextDecoder()

  /** Appends bytes and returns the events they complete. */
  push(chunk: Uint8Array): SseEvent[] {
    let text = this.decoder.decode(chunk, { stream: true })
    if (this.carriageReturn) {
      text = `\r${text}`
      this.carriageReturn = false
    }
    if (text.includes('\r')) {
      if (text.endsWith('\r')) {
        this.carriageReturn = true
        text = text.slice(0, -1)
      }
      text = text.replace(/\r\n?/g, '\n')
    }
    this.buffer += text
    return this.takeEvents()
  }

  /** Whatever is left when the stream ends (an event without its closing blank line). */
  flush(): SseEvent[] {
    this.buffer += this.decoder.decode() + (this.carriageReturn ? '\n' : '')
    this.carriageReturn = false
    const events = this.takeEvents()
    const rest = this.buffer.replace(/\n+$/, '')
    this.buffer = ''
    if (rest) events.push(parseEvent(rest))
    return events
  }

  private takeEvents(): SseEvent[] {
    const events: SseEvent[] = []
    let from = 0
    // Blank lines between events dispatch nothing.
    while (this.buffer.charCodeAt(from) === 10) from += 1
    let end = this.buffer.indexOf('\n\n', from)
    while (end !== -1) {
      events.push(parseEvent(this.buffer.slice(from, end)))
      from = end + 2
      while (this.buffer.charCodeAt(from) === 10) from += 1
      end = this.buffer.indexOf('\n\n', from)
    }
    if (from > 0) this.buffer = this.buffer.slice(from)
    return events
  }
}

function parseEvent(raw: string): SseEvent {
  // Most events are one `data: ` line.
  if (raw.startsWith('data: ') && !raw.includes('\n'))
    return { raw, event: undefined, data: raw.slice(6) }
  let event: string | undefined
  let data: string | undefined
  for (const line of raw.split('\n')) {
    if (line.startsWith('data')) {
      const value =
        line.length === 4
          ? ''
          : line.charCodeAt(4) !== 58
            ? undefined
            : line.charCodeAt(5) === 32
              ? line.slice(6)
              : line.slice(5)
      if (value !== undefined) data = data === undefined ? value : `${data}\n${value}`
    } else if (line.startsWith('event:')) {
      event = line.slice(6).trim()
    }
  }
  return { raw, event, data }
}
