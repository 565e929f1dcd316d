/**
 * The refusals of routing, each with a message that says what to change: an unknown model (with the
 * full ID when the client left out the author), an automatic choice with nothing to choose, a paid
 * fallback after Auto Free, and no usable route (paused, failing, or not allowed).
 */
import { ServiceError } from '../../../shared/errors.ts'
import type { Catalog } from '../../core/catalog/catalog-types.ts'
import type { KeyRecord } from '../../core/key-record.ts'
import type { RouteBlock } from '../../providers/route-health.ts'
import { bareNameMatches, fullIdHint } from '../../core/catalog/model-names.ts'
import { mayUse } from './access.ts'
import { type Features, missingFeature } from './features.ts'

export type Refusal = { error: ServiceError }

/** The longest Retry-After left to the SDKs' own retries, which sleep through it twice without a word to the caller. */
const LONGEST_SDK_WAIT_MS = 60_000

/** Dispatch failures that mean no candidate of an automatic choice could answer, and how to say it. */
const AUTO_FAILURES: Partial<Record<string, string>> = {
  model_unavailable: 'failing',
  upstream_rate_limited: 'rate limiting',
}

export function autoUnresolvable(
  catalog: Catalog,
  key: KeyRecord,
  id: string,
  free: boolean,
  features: Features,
): Refusal {
  const auto = catalog.autos.get(id)!
  const usable = auto.candidates.filter((candidate) => mayUse(key, candidate))
  const capable = usable.filter(
    (candidate) => !missingFeature(catalog.models.get(candidate)!, features),
  )
  if (free && usable.length > 0 && capable.length === 0) {
    const missing = missingFeature(catalog.models.get(usable[0]!)!, features)!
    return {
      error: new ServiceError(
        'invalid_request',
        `${missing.field}: ${id} does not support ${missing.what}; no free model accepts them. Name a model that does.`,
        {
          param: missing.field,
        },
      ),
    }
  }
  const why =
    usable.length === 0
      ? 'none of its candidates is allowed for this key'
      : 'every allowed candidate is unavailable right now'
  const paid = free ? ' No paid model is used instead.' : ''
  return {
    error: new ServiceError(
      'auto_unresolvable',
      `${id} could not choose a model: ${why}. Name a model directly or retry.${paid}`,
      { param: 'model' },
    ),
  }
}

/**
 * Every provider of every candidate an automatic choice made failed or is rate limiting: the request is
 * refused as the choice's own failure (`auto_unresolvable`), so a client that asked for `service/auto`
 * learns that no model could be chosen rather than that one model is down (and Auto Free keeps to its
 * three refusals).
 */
export function autoFailed(id: string, free: boolean, failure: ServiceError): ServiceError {
  const why = AUTO_FAILURES[failure.code]
  if (!why) return failure
  const paid = free ? ' No paid model is used instead.' : ''
  return new ServiceError(
    'auto_unresolvable',
    `${id} could not choose a model: the providers of every candidate are ${why} right now. Name a model directly or retry.${paid}`,
    {
      param: 'model',
    },
  )
}

export function paidAfterFree(param: string, id: string): Refusal {
  return {
    error: new ServiceError(
      'invalid_request',
      `${param}: ${id} is not free, and service/auto:free never falls back to a paid model; remove it`,
      { param },
    ),
  }
}

/**
 * Nothing can serve the request: the operator paused the providers, their breakers are open, no route is
 * allowed, or (`configured` false) no provider of the models has its key set on this gateway.
 */
export function noRoute(
  ids: string[],
  blocks: RouteBlock[],
  nowMs: number,
  configured: boolean,
): ServiceError {
  const names = ids.join(', ')
  const earliest = (reason: RouteBlock['reason']) =>
    blocks
      .filter((block) => block.reason === reason)
      .reduce((min, block) => Math.min(min, block.untilMs), Number.POSITIVE_INFINITY)
  const paused = earliest('paused')
  if (paused !== Number.POSITIVE_INFINITY) {
    return new ServiceError(
      'upstream_capacity_unavailable',
      `Provider capacity for ${names} is paused. Nothing was sent or charged; retry after the time in Retry-After.`,
      {
        retryAfterMs: paused - nowMs,
        // A longer pause is handed to the caller at once rather than held in the SDK's silent wait.
        ...(paused - nowMs > LONGEST_SDK_WAIT_MS && { retry: false }),
      },
    )
  }
  const open = earliest('open')
  if (open !== Number.POSITIVE_INFINITY) {
    return new ServiceError(
      'model_unavailable',
      `The providers of ${names} are failing right now. Retry shortly or choose another allowed model.`,
      {
        retryAfterMs: open - nowMs,
      },
    )
  }
  if (!configured)
    return new ServiceError(
      'no_available_route',
      `No provider of ${names} is set up on this gateway (its provider's API key is not configured). Nothing was sent or charged. Choose another model, or ask the operator to configure the provider.`,
    )
  return new ServiceError(
    'no_available_route',
    `No eligible provider route for ${names} under the current settings. Review the model and provider restrictions on the account, the key and the request.`,
  )
}

/** A model ID the catalog does not have; a bare name is offered the models, automatic choices and aliases it may mean. */
export function unknownModel(catalog: Catalog, id: string, param: string): ServiceError {
  const known = [...catalog.models.keys(), ...catalog.autos.keys(), ...catalog.aliases.keys()]
  const hint = fullIdHint(id, bareNameMatches(id, known))
  return new ServiceError(
    'unknown_model',
    `Unknown model: ${id}.${hint} GET /v1/models lists every model.`,
    { param },
  )
}
