/**
 * Stage 6: the worst case. The hold must cover the most a request can cost on any of its candidates:
 * input tokens at most the prompt's UTF-8 bytes (a byte-level BPE token is at least one byte), plus what
 * the provider adds unseen (the system prompt that describes tools, the results of its own web searches),
 * and at most the model's context,
 * each priced as a prompt-cache write where that costs more than plain input; output at most the
 * requested limit, or the model's maximum output. The tokens-per-minute estimate is the usual size
 * instead (about four bytes a token, at most the largest context), as the providers count it, and is
 * corrected when the request settles.
 */
import type { Model } from '../core/catalog/catalog-types.ts'
import { costNano, type TokenUsage } from '../core/catalog/pricing.ts'
import type { Candidate } from '../core/call.ts'

/** Allowance for one image part: the largest tile budget of current vision models. */
const IMAGE_TOKENS = 2_000
/** Allowance for one page of a PDF given inline, which providers read as an image besides its text. */
const PDF_PAGE_TOKENS = IMAGE_TOKENS
/** Per-message overhead of chat formatting (role markers, separators). */
const MESSAGE_OVERHEAD_TOKENS = 8
/**
 * The system prompt a provider adds when tools are offered, counted as input: Anthropic's tool-use
 * prompt is 264 to 530 tokens by model and tool choice (its pricing page); this covers the largest.
 */
const TOOL_PROMPT_TOKENS = 600
/**
 * Input one of the provider's own web searches adds: its results go into the model's input (about ten
 * pages' extracts; Anthropic's documented examples run from 3,000 to 8,000 tokens a search).
 */
const WEB_SEARCH_INPUT_TOKENS = 10_000
/** Searches held for a web search tool that sets no `max_uses`. */
export const WEB_SEARCHES_WITHOUT_LIMIT = 5

export type Prompt = {
  textBytes: number
  images: number
  /** Pages of the PDFs given inline (their data is counted as text bytes too). */
  pdfPages?: number
  messages: number
  /** The request offers tools. */
  tools?: boolean
  /**
   * Web searches the provider may run itself for the request (a server tool, billed per search): each is
   * held for its fee and the input its results add.
   */
  webSearches?: number
}

export type Estimate = {
  holdNano: number
  /** Counted against tokens per minute until settle. */
  tokens: number
  /** Usual-size input estimate (bytes ÷ 4 and overheads), counted against tokens per minute. */
  inputTokens: number
  /** Upper bound of the input before any model's context applies. */
  promptBoundTokens: number
  requestedOutput: number | undefined
}

/**
 * Tokens a prompt costs beside its text and the provider's tool-use prompt: message framing, images and
 * the pages of PDFs.
 */
export function promptOverhead(prompt: Pick<Prompt, 'messages' | 'images' | 'pdfPages'>): number {
  return (
    prompt.messages * MESSAGE_OVERHEAD_TOKENS +
    prompt.images * IMAGE_TOKENS +
    (prompt.pdfPages ?? 0) * PDF_PAGE_TOKENS
  )
}

/**
 * The system prompt a Messages-style provider adds when tools are offered. An OpenAI-style provider
 * adds none beyond the tool definitions themselves, which a count already takes as text.
 */
export function toolPromptTokens(prompt: Pick<Prompt, 'tools'>): number {
  return prompt.tools ? TOOL_PROMPT_TOKENS : 0
}

export function estimate(
  candidates: Candidate[],
  prompt: Prompt,
  requestedOutput: number | undefined,
): Estimate {
  const overhead = promptOverhead(prompt) + toolPromptTokens(prompt)
  const promptBoundTokens = prompt.textBytes + overhead
  // The bytes of a file given inline (a PDF) are no measure of its tokens, and no model reads more than
  // its context: a multi-megabyte PDF of a few pages is not estimated at millions of tokens.
  const contextTokens = Math.max(0, ...candidates.map(({ model }) => model.contextLength))
  const base = {
    promptBoundTokens,
    requestedOutput,
    webSearches: prompt.webSearches ?? 0,
    inputTokens: Math.min(Math.ceil(prompt.textBytes / 4), contextTokens) + overhead,
    tokens: 0,
    holdNano: 0,
  }
  let outputTokens = 0
  for (const { model } of candidates) {
    base.holdNano = Math.max(base.holdNano, worstCaseNano(base, model))
    outputTokens = Math.max(outputTokens, outputLimit(base, model))
  }
  base.tokens = base.inputTokens + outputTokens
  return base
}

export function inputBound(estimate: Pick<Estimate, 'promptBoundTokens'>, model: Model): number {
  return Math.min(estimate.promptBoundTokens, model.contextLength)
}

export function outputLimit(estimate: Pick<Estimate, 'requestedOutput'>, model: Model): number {
  return Math.min(estimate.requestedOutput ?? model.maxOutputTokens, model.maxOutputTokens)
}

function worstCaseNano(
  estimate: Pick<Estimate, 'promptBoundTokens' | 'requestedOutput'> & { webSearches: number },
  model: Model,
): number {
  const { webSearches } = estimate
  const inputTokens = Math.min(
    estimate.promptBoundTokens + webSearches * WEB_SEARCH_INPUT_TOKENS,
    model.contextLength,
  )
  const { pricing } = model
  // A request may write all its input to the prompt cache, priced above plain input by some providers,
  // and higher again for writes kept an hour.
  const hourPrice = pricing.cacheWrite1hNanoPerMTok ?? 0
  const hourly = hourPrice > pricing.cacheWriteNanoPerMTok
  const written =
    Math.max(hourPrice, pricing.cacheWriteNanoPerMTok) > pricing.inputNanoPerMTok ? inputTokens : 0
  return costNano(pricing, {
    inputTokens,
    cachedInputTokens: 0,
    cacheWriteTokens: written,
    cacheWrite1hTokens: hourly ? written : 0,
    outputTokens: outputLimit(estimate, model),
    webSearches,
  })
}

/**
 * The most tokens one request can read and write on a model: its context and its maximum output. A
 * provider's usage above it is not a count (a provider's bug, 1e15 output tokens): it is not charged,
 * counted against tokens per minute or recorded; the gateway's own count takes its place.
 */
export function usageLimitTokens(model: Model): number {
  return model.contextLength + model.maxOutputTokens
}

export function plausibleUsage(usage: TokenUsage, limitTokens: number): boolean {
  return usage.inputTokens + usage.outputTokens <= limitTokens
}
