/**
 * Relays a Chat Completions stream from an OpenAI-compatible provider to the client as it arrives.
 * Events pass through byte for byte, except the usage chunk: the gateway always asks the provider for
 * usage, adds `cost` to it when the client asked for usage (`stream_options.include_usage`) and drops it
 * otherwise. Delivered output is counted as it goes, so that a stream that breaks, is cut by the client,
 * or reaches its hold can be charged for what was delivered. A failure after the stream began becomes an
 * error event; `[DONE]` is sent only for a complete answer.
 */
import { ServiceError } from '../../../shared/errors.ts'
import { nanoToUsd } from '../../../shared/money.ts'
import type { TokenUsage } from '../../catalog/pricing.ts'
import { SseSplitter, type SseEvent } from '../../providers/sse.ts'
import { chatErrorEvent } from './render-error.ts'
import { chatUsage, readChatUsage } from './usage.ts'

export type StreamEnd = 'complete' | 'upstream_failed' | 'client_closed' | 'hold_reached'

export type StreamOutcome = {
  end: StreamEnd
  /** Usage as the provider reported it, if it did. */
  usage: TokenUsage | undefined
  /** Output tokens delivered, counted from the relayed text (at least one per content chunk). */
  deliveredOutputTokens: number
  failure?: ServiceError
}

export type ChatRelayOptions = {
  first: Uint8Array
  reader: ReadableStreamDefaultReader<Uint8Array>
  upstream: AbortController
  includeUsage: boolean
  idleTimeoutMs: number
  holdNano: number
  /** Input tokens assumed while the provider has not reported usage (the hold's bound). */
  inputBoundTokens: number
  /** Cost of a usage at the serving model's price. */
  price: (usage: TokenUsage) => number
  onEnd: (outcome: StreamOutcome) => void
}

const encoder = new TextEncoder()

type Delta = { content?: unknown; reasoning?: unknown; reasoning_content?: unknown; refusal?: unknown; tool_calls?: { function?: { arguments?: unknown; name?: unknown } }[] }
type Chunk = { id?: string; model?: string; created?: number; choices?: { delta?: Delta; finish_reason?: unknown }[]; usage?: unknown; error?: { message?: unknown } }

export function relayChatStream(options: ChatRelayOptions): ReadableStream<Uint8Array> {
  const splitter = new SseSplitter()
  let usage: TokenUsage | undefined
  let chars = 0
  let contentChunks = 0
  let sawDone = false
  let sawFinish = false
  let finished = false
  let idleExpired = false
  let meta: Pick<Chunk, 'id' | 'model' | 'created'> = {}
  let stream: ReadableStreamDefaultController<Uint8Array> | undefined
  // Nothing moved for the idle time: the provider is silent, or the client stopped reading. Either way
  // the stream ends here, so its hold and its slot do not wait on a reader that may never come.
  const idle = setTimeout(() => {
    idleExpired = true
    if (stream) fail(stream, 'upstream_failed', idleError(options.idleTimeoutMs))
  }, options.idleTimeoutMs)

  const delivered = () => Math.max(contentChunks, Math.ceil(chars / 4))

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
      controller.enqueue(encoder.encode(`${chatErrorEvent(failure)}\n\n`))
      controller.close()
    } catch {
      // The client side of the stream is already gone.
    }
  }

  /** What to send for one upstream event, or a failure that ends the stream. */
  const relayEvent = (event: SseEvent): string | ServiceError | undefined => {
    const data = event.data
    if (data === undefined) return event.raw // comment: keep-alive
    if (data === '[DONE]') {
      sawDone = true
      return undefined
    }
    if (data === '') return undefined
    let chunk: Chunk
    try {
      chunk = JSON.parse(data) as Chunk
    } catch {
      return new ServiceError('upstream_error', 'The provider sent an unreadable stream event; the answer is incomplete. Retry.')
    }
    if (chunk.error) {
      const detail = typeof chunk.error.message === 'string' ? `: ${chunk.error.message}` : ''
      return new ServiceError('upstream_error', `The provider failed after the answer began${detail}. Retry.`)
    }
    meta = { id: chunk.id ?? meta.id, model: chunk.model ?? meta.model, created: chunk.created ?? meta.created }
    for (const choice of chunk.choices ?? []) {
      const delta = choice.delta
      if (delta) {
        const before = chars
        chars += textLength(delta.content) + textLength(delta.reasoning) + textLength(delta.reasoning_content) + textLength(delta.refusal)
        for (const call of delta.tool_calls ?? []) chars += textLength(call.function?.arguments) + textLength(call.function?.name)
        if (chars > before) contentChunks += 1
      }
      if (choice.finish_reason) sawFinish = true
    }
    if (typeof chunk.usage === 'object' && chunk.usage !== null) {
      usage = readChatUsage(chunk.usage)
      if (options.includeUsage) {
        if (usage) (chunk.usage as Record<string, unknown>).cost = costUsd(options, usage)
        return `data: ${JSON.stringify(chunk)}`
      }
      if (!chunk.choices || chunk.choices.length === 0) return undefined
      delete chunk.usage
      return `data: ${JSON.stringify(chunk)}`
    }
    return event.raw
  }

  const relay = (controller: ReadableStreamDefaultController<Uint8Array>, events: SseEvent[]) => {
    let out = ''
    for (const event of events) {
      const result = relayEvent(event)
      if (result instanceof ServiceError) {
        if (out) controller.enqueue(encoder.encode(out))
        fail(controller, 'upstream_failed', result)
        return
      }
      if (result !== undefined) out += `${result}\n\n`
    }
    if (out) controller.enqueue(encoder.encode(out))
    const estimate = options.price({ inputTokens: options.inputBoundTokens, cachedInputTokens: 0, outputTokens: delivered() })
    if (!usage && estimate > options.holdNano) {
      fail(
        controller,
        'hold_reached',
        new ServiceError(
          'insufficient_credits',
          `The answer was stopped at the most this request could be charged: $${nanoToUsd(options.holdNano)} for the tokens delivered. Add credits or lower max_tokens.`,
        ),
      )
    }
  }

  const complete = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    let out = ''
    if (options.includeUsage && !usage) {
      // The provider reported no usage: the client still gets a usage chunk, with the gateway's count.
      const counted = { inputTokens: options.inputBoundTokens, cachedInputTokens: 0, outputTokens: delivered() }
      const synthetic = { ...meta, object: 'chat.completion.chunk', choices: [], usage: { ...chatUsage(counted), cost: costUsd(options, counted) } }
      out += `data: ${JSON.stringify(synthetic)}\n\n`
    }
    out += 'data: [DONE]\n\n'
    if (!finish('complete')) return
    controller.enqueue(encoder.encode(out))
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
        if (finished) return
        const failure = idleExpired
          ? idleError(options.idleTimeoutMs)
          : new ServiceError('upstream_error', 'The provider connection failed after the answer began; the answer is incomplete. Retry.')
        fail(controller, 'upstream_failed', failure)
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
      if (sawDone || sawFinish) complete(controller)
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

function textLength(value: unknown): number {
  return typeof value === 'string' ? value.length : 0
}

function costUsd(options: ChatRelayOptions, usage: TokenUsage): number {
  return Number(nanoToUsd(Math.min(options.price(usage), options.holdNano)))
}
