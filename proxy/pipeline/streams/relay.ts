/**
 * Relays a provider's stream to the client as it arrives. Every provider event is decoded into neutral
 * events (for accounting), and the client style's output decides what the client receives. A read that
 * yields nothing for the client (a keep-alive, half an event, an event with no counterpart in the
 * client's style) is followed by the next read at once: the client's reader only asks again after it
 * was given something, so the relay must not return empty-handed.
 *
 * Delivered output is counted as it goes, so a stream that breaks, is left by the client, reaches its
 * hold or goes idle is charged for what was delivered. The hold is never exceeded: an event whose
 * output would take the cost past it is not sent; the stream ends there with `insufficient_credits`
 * naming the cost of what was delivered, which is the charge. A failure after the stream began becomes
 * an error event in the client's style, and the end marker is sent only for a complete answer.
 */
import { ServiceError } from '../../../shared/errors.ts'
import { nanoToUsd } from '../../../shared/money.ts'
import { outputTokensWithin, type Pricing, type TokenUsage } from '../../core/catalog/pricing.ts'
import type { TokenizerName } from '../../core/catalog/tokenizers.ts'
import type { StreamDecoder } from '../../providers/adapter.ts'
import type { SseEvent } from '../../providers/sse.ts'
import type { StreamHead } from '../../providers/stream-start.ts'
import { deliveredText, type StreamEvent } from '../../core/neutral/answer.ts'
import { plausibleUsage } from '../estimate.ts'
import { DeliveredOutput } from './delivered-output.ts'
import type { StreamOutput } from './stream-output.ts'

export type StreamEnd = 'complete' | 'upstream_failed' | 'client_closed' | 'hold_reached'

export type StreamOutcome = {
  end: StreamEnd
  /** What to charge: the provider's usage for a complete answer, else what was delivered. */
  usage: TokenUsage
  failure?: ServiceError
}

export type RelayOptions = {
  /** The events read before the stream was handed over, and the splitter for the rest. */
  head: StreamHead
  reader: ReadableStreamDefaultReader<Uint8Array>
  upstream: AbortController
  decoder: StreamDecoder
  output: StreamOutput
  idleTimeoutMs: number
  holdNano: number
  /** Input tokens assumed while the provider has not reported usage (the hold's bound). */
  inputBoundTokens: number
  /** A provider's usage above this many tokens in all is ignored (see `plausibleUsage`). */
  usageLimitTokens: number
  /** Input tokens to charge when the provider never reports usage: the gateway's count of the prompt. */
  countInput: () => Promise<number>
  /** The serving model's prices and its family's tokenizer, if public. */
  pricing: Pricing
  tokenizer: TokenizerName | undefined
  /** Cost of a usage at the serving model's price. */
  price: (usage: TokenUsage) => number
  /** Settles the stream; returns what it charged (nano-USD). */
  onEnd: (outcome: StreamOutcome) => number
}

const encoder = new TextEncoder()

/** The provider's connection failed after the stream began. */
const broken = () =>
  new ServiceError(
    'upstream_error',
    'The provider connection failed after the answer began; the answer is incomplete. Retry.',
  )

const inputOnly = (inputTokens: number): TokenUsage => ({
  inputTokens,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  outputTokens: 0,
})

export function relayStream(options: RelayOptions): ReadableStream<Uint8Array> {
  const { decoder, output } = options
  const splitter = options.head.splitter
  let pending: SseEvent[] | undefined = options.head.events
  const delivered = new DeliveredOutput(options.tokenizer)
  let usage: TokenUsage | undefined
  /** Whether the provider's usage was reported after content was delivered: its count of the answer. */
  let usageAfterContent = false
  let sawEnd = false
  let sawFinish = false
  let upstreamDone = false
  /** Set the moment the stream starts to end (before any wait), so nothing else ends it twice. */
  let ended = false
  let stream: ReadableStreamDefaultController<Uint8Array> | undefined
  const chargedNano = (charged: TokenUsage) => Math.min(options.price(charged), options.holdNano)
  const costUsd = (charged: TokenUsage) => Number(nanoToUsd(chargedNano(charged)))

  // The output the hold leaves room for, beside the input the provider reported (or its bound until it does).
  let room = { inputTokens: -1, outputTokens: 0 }
  const outputRoom = () => {
    const input = usage ?? inputOnly(options.inputBoundTokens)
    if (room.inputTokens !== input.inputTokens)
      room = {
        inputTokens: input.inputTokens,
        outputTokens: outputTokensWithin(options.pricing, input, options.holdNano),
      }
    return room.outputTokens
  }

  // Nothing moved for the idle time: the provider is silent, or the client stopped reading. Either way the
  // stream ends here, so its hold and its slot do not wait on a reader that may never come.
  const idle = setTimeout(() => {
    if (stream) void fail(stream, 'upstream_failed', idleError(options.idleTimeoutMs))
  }, options.idleTimeoutMs)

  /**
   * The provider's count, where it gave one. A report from before the content (a start-of-stream
   * `output_tokens: 1`) is not the answer's: no content event is free then. A report after it is the
   * answer's count as it stands, however finely the provider cut its deltas (tool arguments a few
   * characters an event).
   */
  const reportedUsage = () =>
    usage &&
    (usageAfterContent
      ? usage
      : { ...usage, outputTokens: Math.max(usage.outputTokens, delivered.events) })
  /** What an output reads when it writes the usage event (only then is the usage worked out). */
  const accounting = {
    get usage() {
      return reportedUsage()
    },
    costUsd,
  }

  /** The usage to charge for an answer that did not complete: what was delivered. */
  const deliveredUsage = async (): Promise<TokenUsage> => {
    const outputTokens = Math.max(usage?.outputTokens ?? 0, await delivered.estimate())
    return { ...(usage ?? inputOnly(await options.countInput())), outputTokens }
  }

  /** Starts the end; false if it has already started. */
  const end = () => {
    if (ended) return false
    ended = true
    clearTimeout(idle)
    return true
  }

  const fail = async (
    controller: ReadableStreamDefaultController<Uint8Array>,
    kind: StreamEnd,
    failure: ServiceError,
    charged?: TokenUsage,
  ) => {
    if (!end()) return
    options.upstream.abort()
    const usage = charged ?? (await deliveredUsage())
    const costNano = options.onEnd({ end: kind, usage, failure })
    try {
      controller.enqueue(
        encoder.encode(output.fail(failure, { usage, costUsd: Number(nanoToUsd(costNano)) })),
      )
      controller.close()
    } catch {
      // The client side of the stream is already gone.
    }
  }

  /**
   * Whether delivering these texts would take the cost past the hold. Settled at once by the bounds on
   * almost every event; only a count near the limit waits for the tokenizer.
   */
  const pastHold = (texts: string[]): boolean | Promise<boolean> => {
    const limit = outputRoom()
    const atLeast = Math.max(delivered.events + texts.length, usage?.outputTokens ?? 0)
    if (atLeast > limit) return true
    if (!delivered.exact) return false
    const atMost = delivered.bytes + texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0)
    if (atMost <= limit) return false
    // Counted with what was delivered: a delta that ends a word the last one began is not a token more.
    return delivered.tokens(texts.join('')).then((tokens) => tokens > limit)
  }

  const stopAtHold = async (controller: ReadableStreamDefaultController<Uint8Array>) => {
    const charged = await deliveredUsage()
    const cost = nanoToUsd(chargedNano(charged))
    const stop = new ServiceError(
      'insufficient_credits',
      `The answer was stopped at this request's hold of $${nanoToUsd(options.holdNano)}, which covers its output limit at the most its input could cost: the provider went on past the limit. The ${charged.outputTokens} output tokens delivered are charged $${cost}.`,
    )
    await fail(controller, 'hold_reached', stop, charged)
  }

  /** Relays what a read completed; false when the client got nothing from it and the stream goes on. */
  const relay = async (
    controller: ReadableStreamDefaultController<Uint8Array>,
    raws: SseEvent[],
  ): Promise<boolean> => {
    let out = ''
    const send = () => {
      if (out) controller.enqueue(encoder.encode(out))
      return out !== ''
    }
    for (const raw of raws) {
      const events = decoder.decode(raw)
      const failure = account(events)
      if (failure) {
        send()
        await fail(controller, 'upstream_failed', failure)
        return true
      }
      const texts = deliveredText(events)
      if (texts.length > 0) {
        const past = pastHold(texts)
        const stop = typeof past === 'boolean' ? past : await past
        // While the tokenizer counted, the idle timer or the client may have ended the stream.
        if (ended) return true
        if (stop) {
          send()
          await stopAtHold(controller)
          return true
        }
        for (const text of texts) delivered.add(text)
      }
      out += output.event(raw, events, accounting)
      // The provider's end marker completes the answer; whatever follows it is not the client's.
      if (sawEnd) {
        await complete(controller, out)
        return true
      }
    }
    return send()
  }

  const account = (events: StreamEvent[]): ServiceError | undefined => {
    for (const event of events) {
      if (event.type === 'usage') {
        if (plausibleUsage(event.usage, options.usageLimitTokens)) {
          usage = event.usage
          usageAfterContent = delivered.events > 0
        }
      } else if (event.type === 'end') sawEnd = true
      else if (event.type === 'finish') sawFinish = true
      else if (event.type === 'error')
        return new ServiceError(
          'upstream_error',
          `The provider failed after the answer began: ${event.message.replace(/[.\s]+$/, '')}. Retry.`,
        )
    }
    return undefined
  }

  /** Ends a complete answer, after `before` (events not yet sent), in one write. */
  const complete = async (controller: ReadableStreamDefaultController<Uint8Array>, before = '') => {
    if (!end()) return
    const final = reportedUsage() ?? (await deliveredUsage())
    options.onEnd({ end: 'complete', usage: final })
    const last = output.complete({
      usage: final,
      costUsd: costUsd(final),
      reported: usage !== undefined,
    })
    controller.enqueue(encoder.encode(before + last))
    controller.close()
    if (!upstreamDone) void drainUpstream(options)
  }

  /** A read the stream's start left waiting: taken before reading again. */
  let waiting = options.head.pending
  /** The next bytes from the provider; undefined once the stream is ending (failed or aborted). */
  const read = async (
    controller: ReadableStreamDefaultController<Uint8Array>,
  ): Promise<Awaited<ReturnType<typeof options.reader.read>> | undefined> => {
    try {
      const next = waiting ?? options.reader.read()
      waiting = undefined
      const result = await next
      if (result.done) upstreamDone = true
      return ended ? undefined : result
    } catch {
      // A read aborted by the idle timer or the client finds the stream already ending; one the
      // gateway cut (a drain past its deadline) says why in the abort's reason.
      const reason = options.upstream.signal.reason
      await fail(controller, 'upstream_failed', reason instanceof ServiceError ? reason : broken())
      return undefined
    }
  }

  return new ReadableStream<Uint8Array>({
    start(controller) {
      stream = controller
    },
    async pull(controller) {
      if (pending) {
        const events = pending
        pending = undefined
        if (await relay(controller, events)) return
      }
      while (!ended) {
        const result = await read(controller)
        if (!result) return
        idle.refresh()
        if (!result.done) {
          if (await relay(controller, splitter.push(result.value))) return
          continue
        }
        await relay(controller, splitter.flush())
        if (ended) return
        if (sawEnd || sawFinish) await complete(controller)
        else
          await fail(
            controller,
            'upstream_failed',
            new ServiceError(
              'upstream_error',
              'The provider closed the stream before the answer was complete. Retry.',
            ),
          )
        return
      }
    },
    async cancel() {
      if (!end()) return
      options.upstream.abort()
      options.onEnd({ end: 'client_closed', usage: await deliveredUsage() })
    },
  })
}

/** How long the provider may take to close its stream after its end marker before the connection is cut. */
const DRAIN_GRACE_MS = 2_000

/**
 * Reads what the provider sends after its end marker (usually nothing but the close), so its connection
 * can serve the next request; one that stays open past the grace is cut.
 */
async function drainUpstream(options: RelayOptions): Promise<void> {
  const cut = setTimeout(() => options.upstream.abort(), DRAIN_GRACE_MS)
  try {
    while (!(await options.reader.read()).done) {}
  } catch {
    // Cut, or the provider's connection failed: the answer was already complete.
  } finally {
    clearTimeout(cut)
  }
}

function idleError(idleTimeoutMs: number): ServiceError {
  return new ServiceError(
    'upstream_error',
    `The stream was idle for ${Math.round(idleTimeoutMs / 1000)} seconds; the answer is incomplete. Retry.`,
  )
}
