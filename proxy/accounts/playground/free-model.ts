/**
 * What free chat may use: a free automatic choice (Auto Free: free candidates only, and its refusals never
 * reach a paid model) or a free catalog model, also through an alias. Anything else would mean a paid
 * request, which free chat never makes. And which one it uses when the user names none.
 */
import type { Catalog } from '../../core/catalog/catalog-types.ts'
import { ConfigError } from '../../core/config.ts'
import { log } from '../../core/log.ts'

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

/**
 * Checks FREE_CHAT_MODEL at start. One the operator set that is no free choice of the catalog (an
 * unknown ID, a paid model) stops the start naming it; the default, which another catalog may not
 * have, is only warned about when free chat has nothing free to use (it is then refused).
 */
export function checkFreeChatModel(catalog: Catalog, configured: string, isDefault: boolean): void {
  const used = freeChatModel(catalog, configured)
  if (isFreeChoice(catalog, isDefault ? used : configured)) return
  const target = aliasTarget(catalog, configured)
  const what = catalog.models.has(target)
    ? 'a paid model'
    : 'not a model or automatic choice of the catalog'
  if (!isDefault)
    throw new ConfigError(
      `FREE_CHAT_MODEL: ${configured} is ${what}; free chat uses only a free model or a free automatic choice (such as service/auto:free).`,
    )
  log.warn(
    `FREE_CHAT_MODEL (${configured}, the default) is ${what}: free playground chat is refused; set it to a free model of the catalog`,
  )
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
