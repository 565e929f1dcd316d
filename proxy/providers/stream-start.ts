/**
 * The start of a provider's stream, read before it is handed to the client. A provider may answer
 * 200 and then send an error as its first event (overloaded, rate limited): nothing has reached the
 * client yet, so that is a failure before the response started, and the next route or fallback may
 * answer. Keep-alives and pings before it are skipped; the first other event decides, except a start
 * that shows the client nothing yet (a Messages `message_start`, a Chat chunk with only the role): an
 * error right after it (Anthropic's overloaded error comes so) is still a failure before the answer, so
 * the next event is waited for, up to `START_LOOKAHEAD_MS`. What was read is handed on as the events it
 * completed, the splitter holding the rest, and a read still waiting, so the relay goes on from there
 * and nothing is split twice.
 */
import { ServiceError } from '../../shared/errors.ts'
import type { Route } from '../core/catalog/catalog-types.ts'
import { adapters } from './adapters.ts'
import type { StreamDecoder } from './adapter.ts'
import { SseSplitter, type SseEvent } from './sse.ts'
import {
  failureFromNetwork,
  invalidResponse,
  statusOfStreamError,
  type UpstreamFailure,
} from './upstream-failure.ts'

/** Past this many bytes without a whole first event, the stream is handed over as it is. */
const PEEK_LIMIT_BYTES = 64 * 1024
/**
 * How long the event after a bare start is waited for before the stream is handed over: longer than a
 * provider takes to follow its start with content or an error, shorter than a reasoning model's silence.
 */
const START_LOOKAHEAD_MS = 250

type ReadResult = Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>

/**
 * A started stream's events read so far, the splitter that goes on with the next bytes, and the read
 * that was still waiting when the stream was handed over (the relay takes it before reading again).
 */
export type StreamHead = {
  events: SseEvent[]
  splitter: SseSplitter
  pending?: Promise<ReadResult>
}

/** The next read, or the read still waiting once `untilMs` has passed. */
async function readBy(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  untilMs: number,
): Promise<ReadResult | { late: Promise<ReadResult> }> {
  const next = reader.read()
  let timer: Timer | undefined
  const late = new Promise<{ late: Promise<ReadResult> }>((resolve) => {
    timer = setTimeout(() => resolve({ late: next }), Math.max(0, untilMs - Date.now()))
  })
  try {
    return await Promise.race([next, late])
  } finally {
    clearTimeout(timer)
  }
}

export type StreamStart = { head: StreamHead } | { failure: UpstreamFailure }

export async function readStreamStart(
  route: Route,
  reader: ReadableStreamDefaultReader<Uint8Array>,
): Promise<StreamStart> {
  const splitter = new SseSplitter()
  const decoder = adapters[route.provider.style].streamDecoder()
  const events: SseEvent[] = []
  let bytes = 0
  /** Once a bare start was read: when the stream is handed over without the event after it. */
  let lookaheadUntil: number | undefined
  for (;;) {
    const read =
      lookaheadUntil === undefined ? await reader.read() : await readBy(reader, lookaheadUntil)
    if ('late' in read) {
      // Whoever takes the stream takes this read; until then its failure is nobody's to report.
      read.late.catch(() => undefined)
      return { head: { events, splitter, pending: read.late } }
    }
    // An end with nothing but keep-alives (or half an event) started nothing either.
    const completed = read.done ? splitter.flush() : splitter.push(read.value)
    if (!read.done) bytes += read.value.byteLength
    events.push(...completed)
    const decided = firstEvent(route, decoder, completed, lookaheadUntil !== undefined)
    if (decided === 'bare start') lookaheadUntil ??= Date.now() + START_LOOKAHEAD_MS
    else if (decided === 'started') return { head: { events, splitter } }
    else if (decided) return { failure: decided }
    // A bare start and then the end: the relay says the stream ended too soon.
    if (read.done && lookaheadUntil !== undefined) return { head: { events, splitter } }
    if (read.done)
      return {
        // Lines that are neither data nor comments are not an event stream (a JSON body under its type).
        failure:
          events.some((event) => event.event === undefined && !event.raw.startsWith(':')) &&
          events.every((event) => event.data === undefined)
            ? invalidResponse('a stream was asked for and the answer is not an event stream')
            : failureFromNetwork(route.provider.id, new Error('the stream ended before any data')),
      }
    if (bytes >= PEEK_LIMIT_BYTES) return { head: { events, splitter } }
  }
}

/**
 * What the first events other than keep-alives say: the answer started, or failed, or only a start that
 * shows the client nothing yet was read (`bare start`; `afterStart`: one was read before); undefined:
 * nothing yet.
 */
function firstEvent(
  route: Route,
  decoder: StreamDecoder,
  events: SseEvent[],
  afterStart: boolean,
): 'started' | 'bare start' | UpstreamFailure | undefined {
  let bare = afterStart
  for (const event of events) {
    const decoded = decoder.decode(event)
    if (decoded.every((item) => item.type === 'keepalive')) continue
    const first = decoded[0]
    if (first?.type === 'error' && event.data !== undefined) {
      const { error, fallback } = adapters[route.provider.style].failure(
        route.provider.id,
        statusOfStreamError(event.data),
        event.data,
      )
      const message = `Provider ${route.provider.id} sent an error before the answer began: ${first.message}`
      return { error: new ServiceError(error.code, message), fallback }
    }
    if (!decoded.every((item) => item.type === 'start' || item.type === 'usage')) return 'started'
    bare = true
  }
  return bare ? 'bare start' : undefined
}
