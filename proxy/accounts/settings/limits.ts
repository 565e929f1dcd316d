/**
 * An account's own limits, shared by all its keys: requests and tokens per minute and requests at once
 * (NULL: the service's default). They load with the key record, so every change invalidates the account's
 * cached keys on every process, and the next admission uses them.
 */
import { ServiceError } from '../../../shared/errors.ts'
import { LIMIT_LABELS, nothingToChange } from '../../../shared/schemas/admin/field-rules.ts'
import type { AccountLimits, AccountLimitsChanges } from '../../../shared/schemas/admin/policy.ts'
import type { OperatorDeps } from '../operator-deps.ts'

type LimitsRow = {
  rpm_limit: number | null
  tpm_limit: number | null
  concurrency_limit: number | null
}

const COLUMNS = {
  rpmLimit: 'rpm_limit',
  tpmLimit: 'tpm_limit',
  concurrency: 'concurrency_limit',
} as const

export async function readLimits(deps: OperatorDeps, accountId: string): Promise<AccountLimits> {
  const [row] = await deps.sql<
    LimitsRow[]
  >`SELECT rpm_limit, tpm_limit, concurrency_limit FROM accounts WHERE id = ${accountId}`
  if (!row) throw new ServiceError('not_found', `No account ${accountId}.`)
  return view(deps, accountId, row)
}

/** A limit given replaces the account's, null returns it to the default, one left out stays. */
export async function setLimits(
  deps: OperatorDeps,
  accountId: string,
  changes: AccountLimitsChanges,
): Promise<AccountLimits> {
  const values: Record<string, number | null> = {}
  for (const [field, column] of Object.entries(COLUMNS)) {
    const value = changes[field as keyof AccountLimitsChanges]
    if (value !== undefined) values[column] = value
  }
  if (Object.keys(values).length === 0)
    throw new ServiceError('invalid_request', nothingToChange(Object.values(LIMIT_LABELS)))
  const [row] = await deps.sql<LimitsRow[]>`
    UPDATE accounts SET ${deps.sql(values)} WHERE id = ${accountId} RETURNING rpm_limit, tpm_limit, concurrency_limit`
  if (!row) throw new ServiceError('not_found', `No account ${accountId}.`)
  await deps.keys.invalidate({ accountId })
  return view(deps, accountId, row)
}

function view(deps: OperatorDeps, accountId: string, row: LimitsRow): AccountLimits {
  const defaults = deps.accountDefaults
  return {
    accountId,
    rpmLimit: row.rpm_limit,
    tpmLimit: row.tpm_limit,
    concurrency: row.concurrency_limit,
    effective: {
      rpmLimit: row.rpm_limit ?? defaults.rpm,
      tpmLimit: row.tpm_limit ?? defaults.tpm,
      concurrency: row.concurrency_limit ?? defaults.concurrency,
    },
  }
}
