/**
 * An account's routing restrictions, for operators: the models its keys may call and the providers that
 * may serve them, account-wide (NULL: no restriction). They load with the key record: every change
 * invalidates the account's cached keys on every process.
 */
import { ServiceError } from '../../../shared/errors.ts'
import { ALLOWLIST_LABELS, nothingToChange } from '../../../shared/schemas/admin/field-rules.ts'
import type { OperatorDeps } from '../operator-deps.ts'
import { checkModelIds, checkProviderIds } from './allowlists.ts'

/** A list given replaces the stored one, null removes it, an absent one stays as it is. */
export type RoutingChanges = { models?: string[] | null; providers?: string[] | null }

export type RoutingView = { accountId: string; models: string[] | null; providers: string[] | null }

export async function setRouting(
  deps: OperatorDeps,
  accountId: string,
  changes: RoutingChanges,
): Promise<RoutingView> {
  const values: Record<string, string[] | null> = {}
  if (changes.models !== undefined)
    values.allowed_models = checkModelIds(deps.catalog, changes.models, 'models')
  if (changes.providers !== undefined)
    values.allowed_providers = checkProviderIds(deps.catalog, changes.providers, 'providers')
  if (Object.keys(values).length === 0)
    throw new ServiceError('invalid_request', nothingToChange(Object.values(ALLOWLIST_LABELS)))
  const [row] = await deps.sql<
    { allowed_models: string[] | null; allowed_providers: string[] | null }[]
  >`
    UPDATE accounts SET ${deps.sql(values)} WHERE id = ${accountId} RETURNING allowed_models, allowed_providers`
  if (!row) throw new ServiceError('not_found', `No account ${accountId}.`)
  await deps.keys.invalidate({ accountId })
  return { accountId, models: row.allowed_models, providers: row.allowed_providers }
}

/** Removes both restrictions. */
export function clearRouting(deps: OperatorDeps, accountId: string): Promise<RoutingView> {
  return setRouting(deps, accountId, { models: null, providers: null })
}
