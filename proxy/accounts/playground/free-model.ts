/**
 * What free chat may use: a free automatic choice (Auto Free: free candidates only, and its refusals never
 * reach a paid model) or a free catalog model, also through an alias. Anything else would mean a paid
 * request, which free chat never makes.
 */
import type { Catalog } from '../../core/catalog/catalog-types.ts'

/** Alias hops followed, as the resolver follows them. */
const MAX_ALIAS_HOPS = 3

export function isFreeChoice(catalog: Catalog, id: string): boolean {
  let target = id
  for (let hop = 0; hop < MAX_ALIAS_HOPS && catalog.aliases.has(target); hop++)
    target = catalog.aliases.get(target)!
  const auto = catalog.autos.get(target)
  if (auto) return auto.free
  return catalog.models.get(target)?.free === true
}
