/**
 * Relays a provider's stream to the client as it arrives. Every provider event is decoded into neutral
 * events (for accounting), and the client style's output decides what the client receives. Delivered
 * output is counted as it goes, so a stream that breaks, is left by the client, reaches its hold or goes
 * idle can be charged for what was delivered; a failure after the stream began becomes an error event in
 * the client's style, and the end marker is sent only for a complete answer.
 */
import { ServiceError } from '../../shared/errors.ts'
import { nanoToUsd } from '../../shared/money.ts'
import type { TokenUsage } from '../catalog/pricing.ts'
import type { StreamDecoder } from '../providers/adapter.ts'
import { SseSplitter, type SseEvent } from '../providers/sse.ts'
import { deliveredChars, type StreamEvent } from '../translate/answer.ts'
import type { StreamOutput } from './stream-output.ts'

export type StreamEnd = 'complete' | 'upstream_failed' | 'client_closed' | 'hold_reached'

export type StreamOutcome = {
  end: StreamEnd
  /** Usage as the provider reported it, if it did. */
  usage: TokenUsage | undefined
  /** Output tokens delivered, counted from the relayed text (at least one per content event). */
  deliveredOutputTokens: number
  failure?: ServiceError
}

export type RelayOptions = {
  first: Uint8Array
  reader: ReadableStreamDefaultReader<Uint8Array>
  upstream: AbortController
  decoder: StreamDecoder
  output: StreamOutput
  idleTimeoutMs: number
  holdNano: number
  /** Input tokens assumed while the provider has not reported usage (the hold's bound). */
  inputBoundTokens: number
  /** Input tokens to charge when the provider never reports usage (the usual-size estimate). */
  inputEstimateTokens: number
  /** Cost of a usage at the serving model's price. */
  price: (usage: TokenUsage) => number
  onEnd: (outcome: StreamOutcome) => void
}

const encoder = new TextEncoder()

export function relayStream(options: RelayOptions): ReadableStream<Uint8Array> {
  const { decoder, output } = options
  const splitter = new SseSplitter()
  let usage: TokenUsage | undefined
  let chars = 0
  let contentEvents = 0
  let sawEnd = false
  let sawFinish = false
  let finished = false
  let stream: ReadableStreamDefaultController<Uint8Array> | undefined
  const costUsd = (counted: TokenUsage) => Number(nanoToUsd(Math.min(options.price(counted), options.holdNano)))
  const delivered = () => Math.max(contentEvents, Math.ceil(chars / 4))
  const counted = (inputTokens: number): TokenUsage => ({ inputTokens, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: delivered() })

  // Nothing moved for the idle time: the provider is silent, or the client stopped reading. Either way the
  // stream ends here, so its hold and its slot do not wait on a reader that may never come.
  const idle = setTimeout(() => {
    if (stream) fail(stream, 'upstream_failed', idleError(options.idleTimeoutMs))
  }, options.idleTimeoutMs)

  const finish = (end: StreamEnd, failure?: ServiceError) => {
    if (finished) return false
    finished = true
    clearTimeout(idle)
    options.onEnd({ end, usage, deliveredOutputTokens: delivered(), failure })
    return true
  }

  const fail = (controller: ReadableStreamDefaultController<Uint8Array>, end: StreamEnd, failure: ServiceError) => {
    if (!finish(end, failure)) return
    options.upstream.abort()
    try {
      controller.enqueue(encoder.encode(output.fail(failure)))
      controller.close()
    } catch {
      // The client side of the stream is already gone.
    }
  }

  const account = (events: StreamEvent[]): ServiceError | undefined => {
    for (const event of events) {
      if (event.type === 'usage') usage = event.usage
      else if (event.type === 'end') sawEnd = true
      else if (event.type === 'finish') sawFinish = true
      else if (event.type === 'error') return new ServiceError('upstream_error', `The provider failed after the answer began: ${event.message}. Retry.`)
      const length = deliveredChars(event)
      if (length > 0) {
        chars += length
        contentEvents += 1
      }
    }
    return undefined
  }

  const relay = (controller: ReadableStreamDefaultController<Uint8Array>, raws: SseEvent[]) => {
    let out = ''
    for (const raw of raws) {
      const events = decoder.decode(raw)
      const failure = account(events)
      if (failure) {
        if (out) controller.enqueue(encoder.encode(out))
        fail(controller, 'upstream_failed', failure)
        return
      }
      out += output.event(raw, events, { usage, costUsd })
    }
    if (out) controller.enqueue(encoder.encode(out))
    if (!usage && options.price(counted(options.inputBoundTokens)) > options.holdNano) {
      const stop = new ServiceError(
        'insufficient_credits',
        `The answer was stopped at the most this request could be charged: $${nanoToUsd(options.holdNano)} for the tokens delivered. Add credits or lower the output limit.`,
      )
      fail(controller, 'hold_reached', stop)
    }
  }

  const complete = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    const final = usage ?? counted(options.inputEstimateTokens)
    const closing = output.complete({ usage: final, costUsd: costUsd(final), reported: usage !== undefined })
    if (!finish('complete')) return
    controller.enqueue(encoder.encode(closing))
    controller.close()
  }

  return new ReadableStream<Uint8Array>({
    start(controller) {
      stream = controller
      relay(controller, splitter.push(options.first))
    },
    async pull(controller) {
      if (finished) return
      let result: Awaited<ReturnType<typeof options.reader.read>>
      try {
        result = await options.reader.read()
      } catch {
        // A read aborted by the idle timer or the client finds the stream already finished.
        if (finished) return
        fail(controller, 'upstream_failed', new ServiceError('upstream_error', 'The provider connection failed after the answer began; the answer is incomplete. Retry.'))
        return
      }
      if (finished) return
      idle.refresh()
      if (!result.done) {
        relay(controller, splitter.push(result.value))
        return
      }
      relay(controller, splitter.flush())
      if (finished) return
      if (sawEnd || sawFinish) complete(controller)
      else fail(controller, 'upstream_failed', new ServiceError('upstream_error', 'The provider closed the stream before the answer was complete. Retry.'))
    },
    cancel() {
      options.upstream.abort()
      finish('client_closed')
    },
  })
}

function idleError(idleTimeoutMs: number): ServiceError {
  return new ServiceError('upstream_error', `The stream was idle for ${Math.round(idleTimeoutMs / 1000)} seconds; the answer is incomplete. Retry.`)
}
