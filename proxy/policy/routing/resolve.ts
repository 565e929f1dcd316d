/**
 * Stage 4: which models may answer, and over which routes, all in memory. The requested model and its
 * fallbacks become up to four candidates, each with the routes it may use now:
 *  - a catalog model, or an alias of one (an alias leading nowhere: 503 `model_alias_unavailable`);
 *  - an automatic choice (`service/auto…`): its first eligible candidates, in catalog order, that the
 *    key may use, that accept the request's features and that have a usable route (none: the request's
 *    fallbacks, and without any, 503 `auto_unresolvable`). Auto Free uses free models only and never
 *    falls back to a paid one.
 * Access is the key's, its guardrail's and its account's allowlists together (403 `model_not_allowed`).
 * A route is usable when its provider has a key, the account's and the request's provider settings allow
 * it, the operator has not paused the provider and its breaker is not open.
 */
import { ServiceError } from '../../../shared/errors.ts'
import type { Catalog, Model, Route } from '../../core/catalog/catalog-types.ts'
import { resolveAlias } from '../../core/catalog/catalog-choices.ts'
import type { Candidate } from '../../core/call.ts'
import type { KeyRecord } from '../../core/key-record.ts'
import { mayUse, notAllowed } from './access.ts'
import type { RouteBlock, RouteHealth } from '../../providers/route-health.ts'
import { isPresetId } from './presets.ts'
import { preferredRoutes, type ProviderPrefs } from './provider-prefs.ts'
import { type Features, missingFeature } from './features.ts'
import { autoUnresolvable, noRoute, paidAfterFree, type Refusal, unknownModel } from './refusals.ts'

/** The candidates of one request: the requested model and up to three backups. */
export const MAX_CANDIDATES = 4

export type RoutingInput = {
  model: string
  fallbacks: string[]
  /** The request field that holds the fallbacks (`models` or `fallbacks`), for error messages. */
  fallbacksField: string
  prefs?: ProviderPrefs
  features: Features
  nowMs: number
}

export type Routing =
  | {
      ok: true
      candidates: Candidate[]
      /** Served on the account's free allowance. */
      free: boolean
      /** The automatic choice the request named, if it named one. */
      auto: string | undefined
    }
  | { ok: false; error: ServiceError }

export function resolveRouting(
  catalog: Catalog,
  health: RouteHealth,
  key: KeyRecord,
  input: RoutingInput,
): Routing {
  const candidates: Candidate[] = []
  const blocks: RouteBlock[] = []
  const freeOnly = catalog.autos.get(input.model)?.free === true

  /** Whether any model asked for has a provider whose key is set (else the refusal says so). */
  let configured = false
  /** The refusal of an automatic choice with no candidate, when fallbacks may still answer. */
  let autoRefusal: ServiceError | undefined
  const routesFor = (model: Model): Route[] => {
    if (model.routes.some((route) => route.provider.available)) configured = true
    let routes = model.routes.filter(
      (route) =>
        route.provider.available &&
        (!key.accountProviders || key.accountProviders.has(route.provider.id)),
    )
    if (input.prefs) routes = preferredRoutes(routes, input.prefs)
    return routes.filter((route) => {
      const block = health.blocked(route, input.nowMs)
      if (block) blocks.push(block)
      return !block
    })
  }
  const add = (model: Model, routes: Route[]) => {
    if (!candidates.some((candidate) => candidate.model.id === model.id))
      candidates.push({ model, routes })
  }

  const ids = [input.model, ...input.fallbacks]
  for (const [index, id] of ids.entries()) {
    if (candidates.length >= MAX_CANDIDATES) break
    const param = index === 0 ? 'model' : `${input.fallbacksField}[${index - 1}]`
    const auto = catalog.autos.get(id)
    if (auto) {
      if (freeOnly && !auto.free) return refused(paidAfterFree(param, id))
      const chosen = chooseAuto(
        catalog,
        key,
        auto.candidates,
        input.features,
        routesFor,
        MAX_CANDIDATES - candidates.length,
      )
      if (chosen.length === 0 && index === 0) {
        const refusal = autoUnresolvable(catalog, key, id, auto.free, input.features)
        // Without a candidate it cannot start a response: the request's fallbacks answer, as when its
        // candidates fail at their providers; with none of them either, this is the refusal.
        if (input.fallbacks.length === 0) return refused(refusal)
        autoRefusal = refusal.error
      }
      for (const { model, routes } of chosen) add(model, routes)
      continue
    }
    const model = explicitModel(catalog, id, param, index)
    if ('error' in model) return refused(model)
    if (freeOnly && !model.free) return refused(paidAfterFree(param, model.id))
    if (!mayUse(key, model.id))
      return {
        ok: false,
        error: atPlace(
          notAllowed(key, model.id, catalog.models.keys(), param, (other) =>
            catalog.models
              .get(other)!
              .routes.some(
                (route) =>
                  route.provider.available &&
                  (!key.accountProviders || key.accountProviders.has(route.provider.id)),
              ),
          ),
        ),
      }
    const missing = missingFeature(model, input.features)
    if (missing) {
      if (index === 0)
        return {
          ok: false,
          error: new ServiceError(
            'invalid_request',
            `${missing.field}: ${model.id} does not accept ${missing.what}`,
            { param: missing.field },
          ),
        }
      continue
    }
    const routes = routesFor(model)
    if (routes.length > 0) add(model, routes)
  }
  if (candidates.length === 0)
    return { ok: false, error: autoRefusal ?? noRoute(ids, blocks, input.nowMs, configured) }
  return {
    ok: true,
    candidates,
    // The first candidate serves unless it cannot start: a free one puts the request on the allowance.
    free: candidates[0]!.model.free,
    auto: catalog.autos.has(input.model) ? input.model : undefined,
  }
}

function refused(refusal: Refusal): Routing {
  return { ok: false, error: atPlace(refusal.error) }
}

/**
 * A refused fallback is named by its place in the message too (`fallbacks[0]: …`), since the Messages
 * style's error body has no `param` to name it.
 */
function atPlace(error: ServiceError): ServiceError {
  const param = error.details.param
  if (param === undefined || param === 'model' || error.message.startsWith(`${param}: `))
    return error
  return new ServiceError(error.code, `${param}: ${error.message}`, error.details)
}

/** A model ID or alias the client named; presets are resolved before routing and cannot be fallbacks. */
function explicitModel(
  catalog: Catalog,
  id: string,
  param: string,
  index: number,
): Model | Refusal {
  const model = catalog.models.get(id)
  if (model) return model
  if (catalog.aliases.has(id)) {
    const target = resolveAlias(catalog.aliases, catalog.models, id)
    if (target) return target
    return {
      error: new ServiceError(
        'model_alias_unavailable',
        `${id} cannot be resolved to a model right now. Use a concrete model ID or retry shortly.`,
        { param },
      ),
    }
  }
  if (index > 0 && isPresetId(id)) {
    return {
      error: new ServiceError(
        'invalid_request',
        `${param}: a preset cannot be a fallback; name a model`,
        { param },
      ),
    }
  }
  return { error: unknownModel(catalog, id, param) }
}

function chooseAuto(
  catalog: Catalog,
  key: KeyRecord,
  ids: string[],
  features: Features,
  routesFor: (model: Model) => Route[],
  room: number,
): Candidate[] {
  const chosen: Candidate[] = []
  for (const id of ids) {
    if (chosen.length >= Math.min(room, MAX_CANDIDATES - 1)) break
    const model = catalog.models.get(id)!
    if (!mayUse(key, id) || missingFeature(model, features)) continue
    const routes = routesFor(model)
    if (routes.length > 0) chosen.push({ model, routes })
  }
  return chosen
}
