/**
 * The start of a provider's stream, read before it is handed to the client. A provider may answer
 * 200 and then send an error as its first event (overloaded, rate limited): nothing has reached the
 * client yet, so that is a failure before the response started, and the next route or fallback may
 * answer. Keep-alives and pings before it are skipped; the first other event decides. What was read is
 * handed on as the events it completed and the splitter holding the rest, so the relay goes on from
 * there and nothing is split twice.
 */
import { ServiceError } from '../../shared/errors.ts'
import type { Route } from '../core/catalog/catalog-types.ts'
import { adapters } from './adapters.ts'
import type { StreamDecoder } from './adapter.ts'
import { SseSplitter, type SseEvent } from './sse.ts'
import {
  failureFromNetwork,
  statusOfStreamError,
  type UpstreamFailure,
} from './upstream-failure.ts'

/** Past this many bytes without a whole first event, the stream is handed over as it is. */
const PEEK_LIMIT_BYTES = 64 * 1024

/** A started stream's events read so far, and the splitter that goes on with the next bytes. */
export type StreamHead = { events: SseEvent[]; splitter: SseSplitter }

export type StreamStart = { head: StreamHead } | { failure: UpstreamFailure }

export async function readStreamStart(
  route: Route,
  reader: ReadableStreamDefaultReader<Uint8Array>,
): Promise<StreamStart> {
  const splitter = new SseSplitter()
  const decoder = adapters[route.provider.style].streamDecoder()
  const events: SseEvent[] = []
  let bytes = 0
  for (;;) {
    const read = await reader.read()
    // An end with nothing but keep-alives (or half an event) started nothing either.
    const completed = read.done ? splitter.flush() : splitter.push(read.value)
    if (!read.done) bytes += read.value.byteLength
    events.push(...completed)
    const decided = firstEvent(route, decoder, completed)
    if (decided === 'started') return { head: { events, splitter } }
    if (decided) return { failure: decided }
    if (read.done)
      return {
        failure: failureFromNetwork(
          route.provider.id,
          new Error('the stream ended before any data'),
        ),
      }
    if (bytes >= PEEK_LIMIT_BYTES) return { head: { events, splitter } }
  }
}

/** What the first event other than a keep-alive says: the answer started, or failed; undefined: none yet. */
function firstEvent(
  route: Route,
  decoder: StreamDecoder,
  events: SseEvent[],
): 'started' | UpstreamFailure | undefined {
  for (const event of events) {
    const decoded = decoder.decode(event)
    if (decoded.every((item) => item.type === 'keepalive')) continue
    const first = decoded[0]
    if (first?.type !== 'error' || event.data === undefined) return 'started'
    const { error, fallback } = adapters[route.provider.style].failure(
      route.provider.id,
      statusOfStreamError(event.data),
      event.data,
    )
    const message = `Provider ${route.provider.id} sent an error before the answer began: ${first.message}`
    return { error: new ServiceError(error.code, message), fallback }
  }
  return undefined
}
