/**
 * What free chat may use: a free automatic choice (Auto Free: free candidates only, and its refusals never
 * reach a paid model) or a free catalog model, also through an alias. Anything else would mean a paid
 * request, which free chat never makes. And which one it uses when the user names none.
 */
import type { Catalog } from '../../core/catalog/catalog-types.ts'

/** Alias hops followed, as the resolver follows them. */
const MAX_ALIAS_HOPS = 3

export function isFreeChoice(catalog: Catalog, id: string): boolean {
  const target = aliasTarget(catalog, id)
  const auto = catalog.autos.get(target)
  if (auto) return auto.free
  return catalog.models.get(target)?.free === true
}

/**
 * The model free chat uses when the user names none: FREE_CHAT_MODEL, unless no provider of it is
 * configured (no key set) and the catalog has a free model the gateway answers itself (the demo model),
 * which then answers: on a gateway without provider keys, free chat works from the first message.
 */
export function freeChatModel(catalog: Catalog, configured: string): string {
  if (servable(catalog, configured)) return configured
  const builtin = [...catalog.models.values()].find(
    (model) => model.free && model.routes.some((route) => route.provider.builtin !== undefined),
  )
  return builtin?.id ?? configured
}

function aliasTarget(catalog: Catalog, id: string): string {
  let target = id
  for (let hop = 0; hop < MAX_ALIAS_HOPS && catalog.aliases.has(target); hop++)
    target = catalog.aliases.get(target)!
  return target
}

/** Whether a configured provider serves the choice, or one of its candidates. */
function servable(catalog: Catalog, id: string): boolean {
  const target = aliasTarget(catalog, id)
  const ids = catalog.autos.get(target)?.candidates ?? [target]
  return ids.some((candidate) =>
    catalog.models.get(candidate)?.routes.some((route) => route.provider.available),
  )
}
