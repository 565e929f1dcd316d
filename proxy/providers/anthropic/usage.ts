/**
 * Usage in the Messages style: `input_tokens` counts only uncached input; cache reads and writes are
 * separate fields. In neutral form input is the sum of the three. The provider's own web searches
 * (`server_tool_use.web_search_requests`) are billed per search, and cache writes kept an hour
 * (`cache_creation.ephemeral_1h_input_tokens`) at their own price.
 */
import type { TokenUsage } from '../../core/catalog/pricing.ts'
import { tokenCount } from '../openai/usage.ts'

type MessagesUsage = {
  input_tokens?: unknown
  output_tokens?: unknown
  cache_read_input_tokens?: unknown
  cache_creation_input_tokens?: unknown
  server_tool_use?: { web_search_requests?: unknown } | null
  cache_creation?: { ephemeral_1h_input_tokens?: unknown } | null
}

/** Usage from a message or a message_delta; `base` supplies what a partial report leaves out. */
export function readMessagesUsage(usage: unknown, base?: TokenUsage): TokenUsage | undefined {
  if (typeof usage !== 'object' || usage === null) return base
  const {
    input_tokens,
    output_tokens,
    cache_read_input_tokens,
    cache_creation_input_tokens,
    server_tool_use,
    cache_creation,
  } = usage as MessagesUsage
  const uncached = tokenCount(input_tokens)
  const read = tokenCount(cache_read_input_tokens)
  const written = tokenCount(cache_creation_input_tokens)
  const output = tokenCount(output_tokens)
  const searches = tokenCount(server_tool_use?.web_search_requests) ?? base?.webSearches
  const writtenHour =
    tokenCount(cache_creation?.ephemeral_1h_input_tokens) ?? base?.cacheWrite1hTokens
  const hasInput = uncached !== undefined || read !== undefined || written !== undefined
  if (!hasInput && output === undefined) return base
  const cachedInputTokens = read ?? base?.cachedInputTokens ?? 0
  const cacheWriteTokens = written ?? base?.cacheWriteTokens ?? 0
  const inputTokens = hasInput
    ? (uncached ?? 0) + cachedInputTokens + cacheWriteTokens
    : (base?.inputTokens ?? 0)
  return {
    inputTokens,
    cachedInputTokens,
    cacheWriteTokens,
    outputTokens: output ?? base?.outputTokens ?? 0,
    ...(writtenHour ? { cacheWrite1hTokens: writtenHour } : {}),
    ...(searches ? { webSearches: searches } : {}),
  }
}
