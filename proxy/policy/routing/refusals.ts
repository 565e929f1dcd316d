/**
 * The refusals of routing, each with a message that says what to change: an unknown model (with the
 * full ID when the client left out the author, or the ID a typo most likely meant), an automatic
 * choice with nothing to choose, a paid fallback after Auto Free, and no usable route (paused, failing,
 * or not allowed).
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
  // A candidate no provider may serve (none set up on this gateway, or none the account allows) will
  // not come back by retrying.
  const served = capable.some((candidate) =>
    catalog.models
      .get(candidate)!
      .routes.some(
        (route) =>
          route.provider.available &&
          (!key.accountProviders || key.accountProviders.has(route.provider.id)),
      ),
  )
  const why =
    usable.length === 0
      ? 'none of its candidates is allowed for this key'
      : capable.length > 0 && !served
        ? "no provider set up on this gateway and allowed by the account's routing restrictions serves its allowed candidates"
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

/**
 * A model ID the catalog does not have, offered the IDs it most likely meant: for a bare name the full
 * IDs it is the model part of; else the IDs it matches but for letter case or surrounding spaces, the
 * same model under another author, or the nearest IDs within a typo or two. Built on refusals only.
 */
export function unknownModel(catalog: Catalog, id: string, param: string): ServiceError {
  const known = [...catalog.models.keys(), ...catalog.autos.keys(), ...catalog.aliases.keys()]
  const bare = bareNameMatches(id, known)
  const meant = bare.length > 0 ? bare : likelyMeant(id, known)
  const hint = id.includes('/')
    ? meant.length > 0
      ? ` Did you mean ${meant.join(' or ')}?`
      : ''
    : fullIdHint(id, meant)
  return new ServiceError(
    'unknown_model',
    `Unknown model: ${id}.${hint} GET /v1/models lists every model.`,
    { param },
  )
}

/** The most suggestions an unknown model's refusal offers. */
const MOST_SUGGESTIONS = 3

/** The known IDs `id` most likely meant (a bare name is compared with the part after the author). */
export function likelyMeant(id: string, known: string[]): string[] {
  const wanted = id.trim().toLowerCase()
  if (wanted === '') return []
  const withAuthor = wanted.includes('/')
  const comparable = (full: string) =>
    (withAuthor ? full : full.slice(full.indexOf('/') + 1)).toLowerCase()
  const same = known.filter((full) => comparable(full) === wanted)
  if (same.length > 0) return same.slice(0, MOST_SUGGESTIONS)
  if (withAuthor) {
    const model = wanted.slice(wanted.indexOf('/') + 1)
    const otherAuthor = known.filter(
      (full) => full.slice(full.indexOf('/') + 1).toLowerCase() === model,
    )
    if (otherAuthor.length > 0) return otherAuthor.slice(0, MOST_SUGGESTIONS)
  }
  // A typo or two: one edit in a short name, up to two in a longer one.
  const most = wanted.length < 8 ? 1 : 2
  let best = most + 1
  let nearest: string[] = []
  for (const full of known) {
    const distance = editDistance(wanted, comparable(full), most)
    if (distance > most) continue
    if (distance < best) {
      best = distance
      nearest = [full]
    } else if (distance === best) nearest.push(full)
  }
  return nearest.slice(0, MOST_SUGGESTIONS)
}

/**
 * Edits (insertion, deletion, substitution, swap of neighbours) from `a` to `b`, or `most + 1` once it
 * is sure to exceed `most`: names whose lengths differ by more are not compared at all.
 */
function editDistance(a: string, b: string, most: number): number {
  if (Math.abs(a.length - b.length) > most) return most + 1
  let before: number[] = []
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    let smallest = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let value = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        value = Math.min(value, before[j - 2]! + 1)
      row.push(value)
      smallest = Math.min(smallest, value)
    }
    if (smallest > most) return most + 1
    before = previous
    previous = row
  }
  return Math.min(previous[b.length]!, most + 1)
}
