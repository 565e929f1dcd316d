/**
 * Usage written in the Chat Completions style, with the gateway's `cost` in USD. The input read from and
 * written to the prompt cache are parts of `prompt_tokens`; the style has a field for the first, and
 * `cache_write_tokens` beside it says the second (a Messages-style provider's cache writes, priced apart).
 */
import type { TokenUsage } from '../../../core/catalog/pricing.ts'

export function chatUsage(usage: TokenUsage, costUsd: number): Record<string, unknown> {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    prompt_tokens_details: {
      cached_tokens: usage.cachedInputTokens,
      cache_write_tokens: usage.cacheWriteTokens,
    },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    cost: costUsd,
  }
}
