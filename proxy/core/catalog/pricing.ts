/**
 * Prices and costs in integer nano-USD. Catalog prices are USD per million tokens (and per thousand web
 * searches, for a provider that bills its own); they are turned
 * into nano-USD per million tokens exactly (decimal string arithmetic), and a cost is computed in
 * BigInt and rounded up to the next nano, so a charge is never below the listed price.
 */
import { usdToNano } from '../../../shared/money.ts'

export type Pricing = {
  inputNanoPerMTok: number
  outputNanoPerMTok: number
  cachedInputNanoPerMTok: number
  cacheWriteNanoPerMTok: number
  /** Prompt-cache writes kept an hour (Anthropic's `ttl: "1h"`), where priced apart from the others. */
  cacheWrite1hNanoPerMTok?: number
  /** A thousand of the provider's own web searches (a server tool the provider bills per search). */
  webSearchNanoPerThousand?: number
}

export type TokenUsage = {
  /** All input tokens, cached and cache-written ones included. */
  inputTokens: number
  /** Part of inputTokens read from the provider's prompt cache. */
  cachedInputTokens: number
  /** Part of inputTokens written to the provider's prompt cache (priced apart by some providers). */
  cacheWriteTokens: number
  /** Part of cacheWriteTokens kept an hour, when the provider says (priced apart by some providers). */
  cacheWrite1hTokens?: number
  outputTokens: number
  /** Part of outputTokens the model spent reasoning, when the provider says (priced as output). */
  reasoningTokens?: number
  /** Web searches the provider ran for the answer (its server tool), billed per search. */
  webSearches?: number
}

type UsdPrices = {
  inputPerMTok: number
  outputPerMTok: number
  cachedInputPerMTok?: number
  cacheWritePerMTok?: number
  cacheWrite1hPerMTok?: number
  webSearchPerThousand?: number
}

/** Converts catalog USD-per-million prices to nano; a string result names the first price that is not exact. */
export function toPricing(usd: UsdPrices): Pricing | string {
  const input = usdToNano(usd.inputPerMTok)
  const output = usdToNano(usd.outputPerMTok)
  const cached = usd.cachedInputPerMTok === undefined ? input : usdToNano(usd.cachedInputPerMTok)
  const cacheWrite = usd.cacheWritePerMTok === undefined ? input : usdToNano(usd.cacheWritePerMTok)
  if (input === undefined) return 'inputPerMTok'
  if (output === undefined) return 'outputPerMTok'
  if (cached === undefined) return 'cachedInputPerMTok'
  if (cacheWrite === undefined) return 'cacheWritePerMTok'
  const optional = (field: 'cacheWrite1hPerMTok' | 'webSearchPerThousand') =>
    usd[field] === undefined ? undefined : (usdToNano(usd[field]) ?? field)
  const cacheWrite1h = optional('cacheWrite1hPerMTok')
  const webSearch = optional('webSearchPerThousand')
  if (typeof cacheWrite1h === 'string') return cacheWrite1h
  if (typeof webSearch === 'string') return webSearch
  return {
    inputNanoPerMTok: input,
    outputNanoPerMTok: output,
    cachedInputNanoPerMTok: cached,
    cacheWriteNanoPerMTok: cacheWrite,
    ...(cacheWrite1h !== undefined ? { cacheWrite1hNanoPerMTok: cacheWrite1h } : {}),
    ...(webSearch ? { webSearchNanoPerThousand: webSearch } : {}),
  }
}

const MILLION = 1_000_000n

/** Cost of a usage at a price, rounded up to a whole nano-USD. */
export function costNano(pricing: Pricing, usage: TokenUsage): number {
  return Number((scaledCost(pricing, usage) + MILLION - 1n) / MILLION)
}

/**
 * The most output tokens that, beside `input` (its output ignored), cost at most `budgetNano`: -1 when
 * the input alone costs more, Infinity for free output.
 */
export function outputTokensWithin(
  pricing: Pricing,
  input: TokenUsage,
  budgetNano: number,
): number {
  const left = BigInt(budgetNano) * MILLION - scaledCost(pricing, { ...input, outputTokens: 0 })
  if (left < 0n) return -1
  if (pricing.outputNanoPerMTok === 0) return Infinity
  return Number(left / BigInt(pricing.outputNanoPerMTok))
}

/** Cost in nano-USD times a million (prices are per million tokens), before rounding. */
function scaledCost(pricing: Pricing, usage: TokenUsage): bigint {
  const cached = Math.min(usage.cachedInputTokens, usage.inputTokens)
  const written = Math.min(usage.cacheWriteTokens, usage.inputTokens - cached)
  const writtenHour = Math.min(usage.cacheWrite1hTokens ?? 0, written)
  return (
    BigInt(usage.inputTokens - cached - written) * BigInt(pricing.inputNanoPerMTok) +
    BigInt(cached) * BigInt(pricing.cachedInputNanoPerMTok) +
    BigInt(written - writtenHour) * BigInt(pricing.cacheWriteNanoPerMTok) +
    BigInt(writtenHour) * BigInt(pricing.cacheWrite1hNanoPerMTok ?? pricing.cacheWriteNanoPerMTok) +
    BigInt(usage.outputTokens) * BigInt(pricing.outputNanoPerMTok) +
    // A search costs a thousandth of the price per thousand: times a million, a thousand times it.
    BigInt(usage.webSearches ?? 0) * BigInt(pricing.webSearchNanoPerThousand ?? 0) * 1000n
  )
}
