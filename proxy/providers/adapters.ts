/** The adapter of each provider style the catalog knows. */
import type { ProviderStyle } from '../core/catalog/catalog-types.ts'
import type { ProviderAdapter } from './adapter.ts'
import { anthropicAdapter } from './anthropic/adapter.ts'
import { openaiAdapter } from './openai/adapter.ts'

export const adapters: Record<ProviderStyle, ProviderAdapter> = {
  openai: openaiAdapter,
  anthropic: anthropicAdapter,
}
