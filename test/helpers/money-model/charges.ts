/**
 * The money of one request, as the model reads the rules (see model.ts): the hold, the token estimate,
 * and how an admitted request ends and what it is charged, from the fake provider's behaviour and the
 * catalog's prices.
 */
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base'

export type Style = 'chat' | 'responses' | 'messages'

/** How the fake provider answers a catalog model (see test/helpers/fake-upstream/plan.ts). */
export type Behaviour = {
  provider: 'openai' | 'anthropic'
  /** Output tokens of a whole answer, one delta each. */
  tokens: number
  /** Input tokens the provider reports, of which `cached` were read from its cache and `cacheWrite` written. */
  prompt: number
  cached?: number
  cacheWrite?: number
  /** A failure with this HTTP status before any output. */
  status?: number
  /** Streams: the connection drops after this many deltas. */
  breakAfter?: number
  /** Streams: an error event after this many deltas. */
  errorAfter?: number
  /** Streams: the first event, then nothing until the client leaves. */
  stall?: boolean
  /** Streams: the connection drops before anything. */
  dropFirst?: boolean
  chunkDelayMs?: number
}

/** Catalog prices in USD per million tokens. */
export type PriceUsd = {
  inputPerMTok: number
  outputPerMTok: number
  cachedInputPerMTok?: number
  cacheWritePerMTok?: number
}

export type ModelSpec = {
  id: string
  behaviour: Behaviour
  pricing: PriceUsd
  contextLength: number
  maxOutputTokens: number
}

// ---------------------------------------------------------------------------------------------------
// Prices and costs

export type Usage = { input: number; cached: number; written: number; output: number }

/** Nano-USD per million tokens. */
const perMillion = (usd: number) => Math.round(usd * 1e9)

/** The cost of a usage, rounded up to a whole nano-USD. */
export function costOf(pricing: PriceUsd, usage: Usage): number {
  const scaled =
    scaledInput(pricing, usage) + BigInt(usage.output) * BigInt(perMillion(pricing.outputPerMTok))
  return Number((scaled + 999_999n) / 1_000_000n)
}

/** Output tokens that fit in `budgetNano` beside `input` (its output ignored). */
function outputWithin(pricing: PriceUsd, input: Usage, budgetNano: number): number {
  const left = BigInt(budgetNano) * 1_000_000n - scaledInput(pricing, input)
  if (left < 0n) return -1
  return Number(left / BigInt(perMillion(pricing.outputPerMTok)))
}

function scaledInput(pricing: PriceUsd, usage: Usage): bigint {
  return (
    BigInt(usage.input - usage.cached - usage.written) * BigInt(perMillion(pricing.inputPerMTok)) +
    BigInt(usage.cached) * BigInt(perMillion(pricing.cachedInputPerMTok ?? pricing.inputPerMTok)) +
    BigInt(usage.written) * BigInt(perMillion(pricing.cacheWritePerMTok ?? pricing.inputPerMTok))
  )
}

// ---------------------------------------------------------------------------------------------------
// Requests

/** What the test sends, as far as money is concerned. */
export type Ask = {
  style: Style
  stream: boolean
  /** The model named, then its fallbacks. */
  models: string[]
  /** Bytes of the JSON body. */
  bytes: number
  /** Messages the estimate counts (a Responses request counts its input items and its instructions). */
  messages: number
  /** The texts of the prompt, which the gateway counts when a provider reports no input. */
  texts: string[]
  outputLimit: number | undefined
  /** False: the body is refused, after the key (a request without a valid key is 401 first). */
  valid: boolean
  /** Streams: the client leaves after this many content deltas. */
  leaveAfter?: number
}

const MESSAGE_OVERHEAD = 8
/** Streams that break before this many output tokens are written off (spec). */
const WRITE_OFF_BELOW = 50

export function outputLimitOf(ask: Ask, model: ModelSpec): number {
  return Math.min(ask.outputLimit ?? model.maxOutputTokens, model.maxOutputTokens)
}

/**
 * The hold: the worst case over the candidates, its input priced as prompt-cache writes where those
 * cost more than plain input (a request may write all its input to the cache).
 */
export function holdOf(ask: Ask, candidates: ModelSpec[]): number {
  return Math.max(
    ...candidates.map((model) => {
      const input = Math.min(ask.bytes + MESSAGE_OVERHEAD * ask.messages, model.contextLength)
      const { inputPerMTok, cacheWritePerMTok } = model.pricing
      return costOf(model.pricing, {
        input,
        cached: 0,
        written: (cacheWritePerMTok ?? inputPerMTok) > inputPerMTok ? input : 0,
        output: outputLimitOf(ask, model),
      })
    }),
  )
}

/** The usual-size input estimate: about four bytes a token, plus the messages' framing. */
function usualInput(ask: Ask): number {
  return Math.ceil(ask.bytes / 4) + MESSAGE_OVERHEAD * ask.messages
}

/** The gateway's count of the input (o200k, the models here naming no tokenizer), plus the framing. */
function countedInput(ask: Ask): number {
  return ask.texts.reduce((sum, text) => sum + countTokens(text), MESSAGE_OVERHEAD * ask.messages)
}

/** Tokens counted against tokens per minute while the request is open. */
export function tokenEstimateOf(ask: Ask, candidates: ModelSpec[]): number {
  return usualInput(ask) + Math.max(...candidates.map((model) => outputLimitOf(ask, model)))
}

/** How an admitted request ends, and what it costs. */
export type Outcome = {
  end:
    | 'complete'
    | 'released'
    | 'upstream_error'
    | 'stopped_at_hold'
    | 'client_left'
    /** A stalled stream the test keeps open; it ends when the client leaves it. */
    | 'open'
  /** The refusal (released) or the error that ends the stream. */
  code?: string
  served?: ModelSpec
  usage?: Usage
  delivered?: number
  costNano: number
  chargedNano: number
  writtenOffNano: number
  writeOffReason?: string
  /** Tokens the request counts against tokens per minute once it ended. */
  tokens: number
}

/** Whether a candidate can start an answer (the next one is tried only before anything was sent). */
function failureOf(model: ModelSpec, stream: boolean): string | undefined {
  const { status, dropFirst } = model.behaviour
  if (status === 429) return 'upstream_rate_limited'
  if (status !== undefined && status >= 500) return 'model_unavailable'
  if (stream && dropFirst) return 'model_unavailable'
  return undefined
}

export function outcomeOf(ask: Ask, holdNano: number, candidates: ModelSpec[]): Outcome {
  let lastFailure = 'model_unavailable'
  const served = candidates.find((model) => {
    const failure = failureOf(model, ask.stream)
    if (failure) lastFailure = failure
    return failure === undefined
  })
  if (!served)
    return {
      end: 'released',
      code: lastFailure,
      costNano: 0,
      chargedNano: 0,
      writtenOffNano: 0,
      tokens: 0,
    }
  const b = served.behaviour
  const reported: Usage = {
    input: b.prompt,
    cached: b.cached ?? 0,
    written: b.cacheWrite ?? 0,
    output: b.tokens,
  }
  const charge = (end: Outcome['end'], usage: Usage, forgive = false, code?: string): Outcome => {
    const costNano = costOf(served.pricing, usage)
    const chargedNano = forgive ? 0 : Math.min(costNano, holdNano)
    const writtenOffNano = costNano - chargedNano
    return {
      end,
      code,
      served,
      usage,
      delivered: usage.output,
      costNano,
      chargedNano,
      writtenOffNano,
      writeOffReason:
        writtenOffNano === 0 ? undefined : forgive ? 'stream_broken_early' : 'cost_above_hold',
      tokens: usage.input + usage.output,
    }
  }
  if (!ask.stream) return charge('complete', reported)

  // A Messages-style provider reports the input before the first delta; an OpenAI-style one only at the
  // end, so until then the stop at the hold counts the hold's own input bound, and a stream that does not
  // complete is charged the gateway's count of the prompt.
  const reportsFirst = b.provider === 'anthropic'
  const boundInput = Math.min(ask.bytes + MESSAGE_OVERHEAD * ask.messages, served.contextLength)
  const roomInput = reportsFirst
    ? { ...reported, output: 0 }
    : { input: boundInput, cached: 0, written: 0, output: 0 }
  const room = outputWithin(served.pricing, roomInput, holdNano)
  const chargedInput = reportsFirst
    ? { ...reported, output: 0 }
    : { input: Math.min(countedInput(ask), served.contextLength), cached: 0, written: 0, output: 0 }
  const delivered = (output: number): Usage => ({ ...chargedInput, output })

  const providerStops = b.stall ? 0 : Math.min(b.tokens, b.breakAfter ?? b.errorAfter ?? b.tokens)
  const clientStops = ask.leaveAfter ?? Number.POSITIVE_INFINITY
  const stops = Math.min(providerStops, clientStops)
  if (stops > room) return charge('stopped_at_hold', delivered(room), false, 'insufficient_credits')
  if (clientStops <= providerStops && ask.leaveAfter !== undefined)
    return charge('client_left', delivered(clientStops))
  if (b.stall) return charge('open', delivered(0))
  if (providerStops < b.tokens)
    return charge(
      'upstream_error',
      delivered(providerStops),
      providerStops < WRITE_OFF_BELOW,
      'upstream_error',
    )
  return charge('complete', reported)
}

/** A stream kept open (stalled) that its client leaves: charged for what it was sent, nothing delivered. */
export function leftOpen(ask: Ask, holdNano: number, candidates: ModelSpec[]): Outcome {
  return outcomeOf({ ...ask, leaveAfter: 0 }, holdNano, candidates)
}
