/**
 * Provider pauses, for operators: take a catalog provider's capacity out of routing until a time (requests
 * use other routes, or get 503 `upstream_capacity_unavailable` with Retry-After when none is left), resume
 * it, and list the providers with their state. Pauses live in Postgres; every process re-reads them every
 * few seconds, and the one that changed them at once.
 */
import { ServiceError } from '../../../shared/errors.ts'
import type { OperatorDeps } from '../operator-deps.ts'
import type { Provider } from '../../core/catalog/catalog-types.ts'

/** Longest pause: a year. Longer is a catalog change (remove the provider), not a pause. */
const MAX_PAUSE_MS = 366 * 24 * 60 * 60 * 1000
const MAX_REASON_LENGTH = 200
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/

export type PauseInput = { minutes?: number; until?: string; reason?: string }

export type PauseState = { until: string; reason: string }

export type ProviderView = {
  id: string
  style: Provider['style']
  baseUrl: string
  /** The variable of its key; null for a provider that takes none (built in, or a local server). */
  apiKeyEnv: string | null
  /** Whether it can serve: its key's variable is set, or it takes no key. Otherwise its routes are skipped. */
  keyConfigured: boolean
  /** Catalog models routed to this provider. */
  modelCount: number
  paused: PauseState | null
}

export async function pauseProvider(
  deps: OperatorDeps,
  providerId: string,
  input: PauseInput,
): Promise<{ providerId: string; paused: PauseState }> {
  requireProvider(deps, providerId)
  const untilMs = pauseEnd(input, Date.now())
  const reason = input.reason?.trim() ?? ''
  if (reason.length > MAX_REASON_LENGTH)
    throw new ServiceError(
      'invalid_request',
      `reason: must be at most ${MAX_REASON_LENGTH} characters`,
      { param: 'reason' },
    )
  const until = new Date(untilMs)
  await deps.sql`
    INSERT INTO provider_pauses (provider_id, paused_until, reason) VALUES (${providerId}, ${until}, ${reason})
    ON CONFLICT (provider_id) DO UPDATE SET paused_until = excluded.paused_until, reason = excluded.reason, created_at = now()`
  await deps.health?.refreshPauses(deps.sql)
  return { providerId, paused: { until: until.toISOString(), reason } }
}

/** Ends a pause at once; resuming a provider that is not paused changes nothing. */
export async function resumeProvider(
  deps: OperatorDeps,
  providerId: string,
): Promise<{ providerId: string; paused: null }> {
  requireProvider(deps, providerId)
  await deps.sql`DELETE FROM provider_pauses WHERE provider_id = ${providerId}`
  await deps.health?.refreshPauses(deps.sql)
  return { providerId, paused: null }
}

export async function listProviders(deps: OperatorDeps): Promise<{ providers: ProviderView[] }> {
  const rows = await deps.sql<{ provider_id: string; paused_until: Date; reason: string }[]>`
    SELECT provider_id, paused_until, reason FROM provider_pauses WHERE paused_until > now()`
  const pauses = new Map(
    rows.map((row) => [
      row.provider_id,
      { until: row.paused_until.toISOString(), reason: row.reason },
    ]),
  )
  const modelCounts = new Map<string, number>()
  for (const model of deps.catalog.models.values()) {
    for (const id of new Set(model.routes.map((route) => route.provider.id)))
      modelCounts.set(id, (modelCounts.get(id) ?? 0) + 1)
  }
  const providers = [...deps.catalog.providers.values()].map((provider) => ({
    id: provider.id,
    style: provider.style,
    baseUrl: provider.baseUrl,
    apiKeyEnv: provider.apiKeyEnv ?? null,
    keyConfigured: provider.available,
    modelCount: modelCounts.get(provider.id) ?? 0,
    paused: pauses.get(provider.id) ?? null,
  }))
  return { providers }
}

function requireProvider(deps: OperatorDeps, providerId: string): void {
  if (!deps.catalog.providers.has(providerId)) {
    throw new ServiceError(
      'not_found',
      `No provider ${providerId} in the catalog; it has ${[...deps.catalog.providers.keys()].join(', ')}.`,
    )
  }
}

/** When the pause ends: `minutes` from now or `until` (one of them, in the future, within a year). */
function pauseEnd(input: PauseInput, nowMs: number): number {
  if ((input.minutes === undefined) === (input.until === undefined)) {
    throw new ServiceError(
      'invalid_request',
      input.minutes === undefined
        ? 'Give minutes or until (an ISO 8601 time) for the pause to end.'
        : 'Give either minutes or until (an ISO 8601 time), not both.',
      { param: input.minutes === undefined ? 'minutes' : 'until' },
    )
  }
  if (input.minutes !== undefined) {
    if (
      !Number.isFinite(input.minutes) ||
      input.minutes <= 0 ||
      input.minutes * 60_000 > MAX_PAUSE_MS
    ) {
      throw new ServiceError(
        'invalid_request',
        'minutes: must be more than 0 and at most a year (527040)',
        { param: 'minutes' },
      )
    }
    return nowMs + Math.round(input.minutes * 60_000)
  }
  const untilMs = ISO_TIME.test(input.until!) ? Date.parse(input.until!) : Number.NaN
  if (Number.isNaN(untilMs)) {
    throw new ServiceError(
      'invalid_request',
      'until: must be an ISO 8601 time with a zone, such as 2030-01-01T12:00:00Z',
      { param: 'until' },
    )
  }
  if (untilMs <= nowMs || untilMs - nowMs > MAX_PAUSE_MS)
    throw new ServiceError(
      'invalid_request',
      'until: must be in the future and at most a year away',
      { param: 'until' },
    )
  return untilMs
}
