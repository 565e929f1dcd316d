/** Usage written in the Chat Completions style, with the gateway's `cost` in USD. */
import type { TokenUsage } from '../../../core/catalog/pricing.ts'

export function chatUsage(usage: TokenUsage, costUsd: number): Record<string, unknown> {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedInputTokens },
    cost: costUsd,
  }
}
