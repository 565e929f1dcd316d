/**
 * The model catalog as clients read it (`GET /v1/models`, `GET /api/v1/models`): every exact model ID
 * with its context length, maximum output, prices (USD per million tokens, as decimal strings), what it
 * outputs (`output_modalities`) and the client styles it can be called with. Image models follow, called
 * with the Images API (`styles: ["images"]`, `output_modalities: ["image"]`) and priced per image for
 * each size and quality. One object satisfies both official SDKs' `models.list()`: the OpenAI fields
 * (`object`, `created`, `owned_by`) and the Anthropic ones (`type`, `display_name`, `created_at`,
 * `has_more`, `first_id`, `last_id`). Aliases follow with `alias_of`; automatic choices list their
 * candidates (their price is the chosen candidate's). A model no provider here can serve (its key unset)
 * is left out, as are aliases of it and automatic candidates it would be.
 */
import { nanoToUsd } from '../../../shared/money.ts'
import type { Catalog, ImageModel, Model } from './catalog-types.ts'
import { resolveAlias } from './catalog-choices.ts'

/** Every chat model can be called in every client style: the gateway translates between them. */
const styles = ['chat', 'messages', 'responses']

export function catalogListing(catalog: Catalog, listedAt: Date): Record<string, unknown> {
  const created = Math.floor(listedAt.getTime() / 1000)
  const createdAt = listedAt.toISOString()
  const data: Record<string, unknown>[] = [
    ...[...catalog.models.values()]
      .filter(served)
      .map((model) => modelEntry(model, created, createdAt)),
    ...[...catalog.images.values()]
      .filter(served)
      .map((model) => imageEntry(model, created, createdAt)),
  ]
  for (const [id, target] of catalog.aliases) {
    const model = resolveAlias(catalog.aliases, catalog.models, id)
    if (model && served(model))
      data.push({
        ...modelEntry(model, created, createdAt),
        id,
        display_name: `${model.name} (${id})`,
        alias_of: target,
      })
  }
  for (const auto of catalog.autos.values()) {
    const candidates = auto.candidates.filter((id) => {
      const model = catalog.models.get(id)
      return model !== undefined && served(model)
    })
    if (candidates.length > 0)
      data.push({
        ...choiceEntry(auto.id, created, createdAt),
        auto_candidates: candidates,
        free: auto.free,
      })
  }
  return listing(data)
}

/**
 * Whether a provider with its key set (or one that needs none) serves the model: one that none does
 * would only ever answer 503 `no_available_route`, so it is not offered.
 */
function served(model: Pick<Model, 'routes'>): boolean {
  return model.routes.some((route) => route.provider.available)
}

/** The listing with entries of the caller's own added (presets). */
export function listing(data: Record<string, unknown>[]): Record<string, unknown> {
  return {
    object: 'list',
    data,
    has_more: false,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
  }
}

/** An entry for a name that is not one model: an automatic choice or a preset (both chat). */
export function choiceEntry(
  id: string,
  created: number,
  createdAt: string,
): Record<string, unknown> {
  return {
    ...sdkFields(id, created, createdAt),
    display_name: id,
    output_modalities: ['text'],
    styles,
  }
}

/** What both SDKs read of every entry: `id`, `object`, `created`, `owned_by`; `type`, `created_at`. */
function sdkFields(id: string, created: number, createdAt: string) {
  return {
    id,
    object: 'model',
    type: 'model',
    created,
    created_at: createdAt,
    owned_by: id.slice(0, id.indexOf('/')).replace(/^@/, ''),
  }
}

function modelEntry(model: Model, created: number, createdAt: string) {
  const { pricing } = model
  return {
    ...sdkFields(model.id, created, createdAt),
    display_name: model.name,
    context_length: model.contextLength,
    max_output_tokens: model.maxOutputTokens,
    output_modalities: ['text'],
    pricing: {
      unit: 'usd_per_million_tokens',
      input: nanoToUsd(pricing.inputNanoPerMTok),
      output: nanoToUsd(pricing.outputNanoPerMTok),
      cached_input: nanoToUsd(pricing.cachedInputNanoPerMTok),
      cache_write: nanoToUsd(pricing.cacheWriteNanoPerMTok),
      ...(pricing.cacheWrite1hNanoPerMTok !== undefined
        ? { cache_write_1h: nanoToUsd(pricing.cacheWrite1hNanoPerMTok) }
        : {}),
      ...(pricing.webSearchNanoPerThousand
        ? { web_search_per_thousand: nanoToUsd(pricing.webSearchNanoPerThousand) }
        : {}),
    },
    free: model.free,
    styles,
  }
}

/** An image model: called with `POST /v1/images/generations`, priced per image by "<size>/<quality>". */
function imageEntry(model: ImageModel, created: number, createdAt: string) {
  return {
    ...sdkFields(model.id, created, createdAt),
    display_name: model.name,
    output_modalities: ['image'],
    pricing: {
      unit: 'usd_per_image',
      per_image: Object.fromEntries(
        [...model.pricesNano].map(([variant, nano]) => [variant, nanoToUsd(nano)]),
      ),
    },
    default_size: model.defaultSize,
    default_quality: model.defaultQuality,
    free: false,
    styles: ['images'],
  }
}
