/** Usage written in the Messages style (uncached input apart from cache reads and writes), with `cost` in USD. */
import type { TokenUsage } from '../../../core/catalog/pricing.ts'

export function messagesUsage(usage: TokenUsage, costUsd: number): Record<string, unknown> {
  return {
    input_tokens: usage.inputTokens - usage.cachedInputTokens - usage.cacheWriteTokens,
    output_tokens: usage.outputTokens,
    cache_read_input_tokens: usage.cachedInputTokens,
    cache_creation_input_tokens: usage.cacheWriteTokens,
    cost: costUsd,
  }
}
