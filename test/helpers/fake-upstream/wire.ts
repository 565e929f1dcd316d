/**
 * How the fake provider puts a stream on the wire, as real providers do: each event its own network
 * write, with a pause before the next, so the gateway reads events one by one and sometimes in pieces.
 * The options (from the model name, see plan.ts) cut the same bytes differently:
 *
 *   writes=event   one write per event (default)      writes=one     the whole stream in one write
 *   writes=bytes   one write per byte                 writes=random  writes of 1 to 64 bytes, cut
 *   writes=batch   three events per write                            anywhere (seed=N, default 1)
 *   gap=MS         pause after each write (default: 1 ms for events and batches; one turn of the event
 *                  loop for bytes and random cuts, so a long stream stays fast)
 *   crlf=1         CRLF line endings
 */
import { prng } from '../prng.ts'

export type WireMode = 'event' | 'bytes' | 'random' | 'one' | 'batch'

export type Wire = { mode: WireMode; gapMs: number | undefined; crlf: boolean; seed: number }

const MODES = new Set<WireMode>(['event', 'bytes', 'random', 'one', 'batch'])
const EVENTS_PER_BATCH = 3
const MAX_RANDOM_WRITE = 64

export function wireOf(options: URLSearchParams): Wire {
  const mode = (options.get('writes') ?? 'event') as WireMode
  if (!MODES.has(mode)) throw new Error(`fake provider: unknown writes=${mode}`)
  const gap = options.get('gap')
  return {
    mode,
    gapMs: gap === null ? undefined : Number(gap),
    crlf: options.get('crlf') === '1',
    seed: Number(options.get('seed') ?? 1),
  }
}

/** Writes a stream's events to a response body the way `wire` says, pausing between writes. */
export class WireWriter {
  private pending = new Uint8Array(0)
  private events = 0
  private readonly encoder = new TextEncoder()
  private readonly random: () => number

  constructor(
    private readonly controller: ReadableStreamDefaultController<Uint8Array>,
    private readonly wire: Wire,
    private readonly cancelled: () => boolean,
  ) {
    this.random = prng(wire.seed).next
  }

  /** One SSE event (its text ends with the blank line). */
  async event(text: string): Promise<void> {
    this.append(this.encoder.encode(this.wire.crlf ? text.replaceAll('\n', '\r\n') : text))
    this.events += 1
    await this.drain(false)
  }

  /** Sends whatever is still held back (the end of the stream, or before the connection drops). */
  async flush(): Promise<void> {
    await this.drain(true)
  }

  /**
   * Waits until the server took every chunk written from the body (erroring the body discards chunks it
   * has not taken), at most 2 s, then a moment more for its socket to send them.
   */
  async taken(): Promise<void> {
    for (let waited = 0; waited < 2_000 && !this.cancelled(); waited += 5) {
      if ((this.controller.desiredSize ?? 1) > 0) break
      await Bun.sleep(5)
    }
    await Bun.sleep(30)
  }

  private append(bytes: Uint8Array): void {
    const joined = new Uint8Array(this.pending.length + bytes.length)
    joined.set(this.pending)
    joined.set(bytes, this.pending.length)
    this.pending = joined
  }

  private async drain(final: boolean): Promise<void> {
    switch (this.wire.mode) {
      case 'event':
        return this.write(this.take(this.pending.length))
      case 'batch':
        if (final || this.events % EVENTS_PER_BATCH === 0)
          await this.write(this.take(this.pending.length))
        return
      case 'one':
        if (final) await this.write(this.take(this.pending.length))
        return
      case 'bytes':
        while (this.pending.length > 0) await this.write(this.take(1))
        return
      case 'random':
        for (;;) {
          const size = 1 + Math.floor(this.random() * MAX_RANDOM_WRITE)
          if (this.pending.length < size && !(final && this.pending.length > 0)) return
          await this.write(this.take(Math.min(size, this.pending.length)))
        }
    }
  }

  private take(length: number): Uint8Array {
    const piece = this.pending.slice(0, length)
    this.pending = this.pending.slice(length)
    return piece
  }

  private async write(bytes: Uint8Array): Promise<void> {
    if (bytes.length === 0 || this.cancelled()) return
    this.controller.enqueue(bytes)
    const gapMs =
      this.wire.gapMs ?? (this.wire.mode === 'bytes' || this.wire.mode === 'random' ? 0 : 1)
    await (gapMs > 0 ? Bun.sleep(gapMs) : new Promise((resolve) => setImmediate(resolve)))
  }
}
