/**
 * Usage in the OpenAI style: `prompt_tokens` (cached part in `prompt_tokens_details`), `completion_tokens`
 * (reasoning part in `completion_tokens_details`).
 */
import type { TokenUsage } from '../../core/catalog/pricing.ts'

type ChatUsage = {
  prompt_tokens?: unknown
  completion_tokens?: unknown
  prompt_tokens_details?: { cached_tokens?: unknown } | null
  completion_tokens_details?: { reasoning_tokens?: unknown } | null
}

export const tokenCount = (value: unknown) =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : undefined

/** The provider's usage, or undefined when it is missing or not numbers. */
export function readChatUsage(usage: unknown): TokenUsage | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined
  const { prompt_tokens, completion_tokens, prompt_tokens_details, completion_tokens_details } =
    usage as ChatUsage
  const inputTokens = tokenCount(prompt_tokens)
  const outputTokens = tokenCount(completion_tokens)
  if (inputTokens === undefined || outputTokens === undefined) return undefined
  const reasoningTokens = tokenCount(completion_tokens_details?.reasoning_tokens)
  return {
    inputTokens,
    outputTokens,
    cachedInputTokens: tokenCount(prompt_tokens_details?.cached_tokens) ?? 0,
    cacheWriteTokens: 0,
    ...(reasoningTokens !== undefined ? { reasoningTokens } : {}),
  }
}
