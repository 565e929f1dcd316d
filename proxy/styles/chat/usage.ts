/**
 * Usage in the Chat Completions style: `prompt_tokens` (cached part in `prompt_tokens_details`) and
 * `completion_tokens`, and the cost the gateway adds as `usage.cost` in USD.
 */
import type { TokenUsage } from '../../catalog/pricing.ts'

type ChatUsage = {
  prompt_tokens?: unknown
  completion_tokens?: unknown
  prompt_tokens_details?: { cached_tokens?: unknown } | null
}

const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : undefined)

/** The provider's usage, or undefined when it is missing or not numbers. */
export function readChatUsage(usage: unknown): TokenUsage | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined
  const { prompt_tokens, completion_tokens, prompt_tokens_details } = usage as ChatUsage
  const inputTokens = count(prompt_tokens)
  const outputTokens = count(completion_tokens)
  if (inputTokens === undefined || outputTokens === undefined) return undefined
  return { inputTokens, outputTokens, cachedInputTokens: count(prompt_tokens_details?.cached_tokens) ?? 0 }
}

/** A usage object in this style, for answers whose provider reported none. */
export function chatUsage(usage: TokenUsage): Record<string, unknown> {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedInputTokens },
  }
}
