/** The catalog's types, shared by the loader, its parts and every layer that reads a model or a route. */
import type { CatalogModel } from './catalog-schema.ts'
import type { Pricing } from './pricing.ts'
import type { TokenizerName } from './tokenizers.ts'

export type ProviderStyle = 'openai' | 'anthropic'

export type Provider = {
  id: string
  style: ProviderStyle
  baseUrl: string
  /** The environment variable of its key; undefined for a provider that takes none (a local server). */
  apiKeyEnv: string | undefined
  /** Undefined when there is no key: the variable is not set, or the provider takes none. */
  apiKey: string | undefined
  /** Whether its routes can serve: its key is set, or it needs none. */
  available: boolean
  /** A provider built into the gateway, answered in the process instead of over the network. */
  builtin: 'echo' | undefined
}

/** A way to serve a model: the provider, its name for the model, and the model's output limit. */
export type Route = {
  provider: Provider
  upstreamModel: string
  maxOutputTokens: number
  /** The model takes a reasoning effort (true), takes none (false), or the catalog does not say. */
  reasoning?: boolean
}

export type Model = {
  id: string
  name: string
  contextLength: number
  maxOutputTokens: number
  pricing: Pricing
  /** Prices as the catalog lists them, in USD per million tokens, for display. */
  pricingUsd: CatalogModel['pricing']
  routes: Route[]
  free: boolean
  /** The family's tokenizer, if the catalog names one. */
  tokenizer: TokenizerName | undefined
  capabilities: { tools: boolean; images: boolean }
}

/** A model chosen automatically from candidates, in order. */
export type Auto = { id: string; candidates: string[]; free: boolean }

export type ImageModel = {
  id: string
  name: string
  routes: Route[]
  /** Nano-USD per image by "<size>/<quality>". */
  pricesNano: Map<string, number>
  defaultSize: string
  defaultQuality: string
}

export type Catalog = {
  providers: Map<string, Provider>
  models: Map<string, Model>
  /** Alias ID → target ID (which may itself be an alias). */
  aliases: Map<string, string>
  autos: Map<string, Auto>
  images: Map<string, ImageModel>
}
