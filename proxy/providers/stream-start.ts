/**
 * The start of a provider's stream, read before it is handed to the client. A provider may answer
 * 200 and then send an error as its first event (overloaded, rate limited): nothing has reached the
 * client yet, so that is a failure before the response started, and the next route or fallback may
 * answer. Keep-alives and pings before it are skipped; the first other event decides. What was read is
 * returned whole, so the relay sees the provider's bytes unchanged.
 */
import { ServiceError } from '../../shared/errors.ts'
import type { Route } from '../core/catalog/catalog-types.ts'
import { adapters } from './adapters.ts'
import { SseSplitter } from './sse.ts'
import {
  failureFromNetwork,
  statusOfStreamError,
  type UpstreamFailure,
} from './upstream-failure.ts'

/** Past this many bytes without a whole first event, the stream is handed over as it is. */
const PEEK_LIMIT_BYTES = 64 * 1024

export type StreamStart = { first: Uint8Array } | { failure: UpstreamFailure }

export async function readStreamStart(
  route: Route,
  reader: ReadableStreamDefaultReader<Uint8Array>,
): Promise<StreamStart> {
  const splitter = new SseSplitter()
  const decoder = adapters[route.provider.style].streamDecoder()
  const chunks: Uint8Array[] = []
  let bytes = 0
  for (;;) {
    const read = await reader.read()
    if (read.done || !read.value) {
      if (bytes > 0) return { first: joined(chunks, bytes) }
      return {
        failure: failureFromNetwork(
          route.provider.id,
          new Error('the stream ended before any data'),
        ),
      }
    }
    chunks.push(read.value)
    bytes += read.value.byteLength
    for (const event of splitter.push(read.value)) {
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
        return { failure: { error: new ServiceError(error.code, message), fallback } }
      }
      return { first: joined(chunks, bytes) }
    }
    if (bytes >= PEEK_LIMIT_BYTES) return { first: joined(chunks, bytes) }
  }
}

function joined(chunks: Uint8Array[], bytes: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!
  const all = new Uint8Array(bytes)
  let at = 0
  for (const chunk of chunks) {
    all.set(chunk, at)
    at += chunk.byteLength
  }
  return all
}
