/**
 * Key lifecycle for operators: create (the plaintext is returned once and never stored), update (guardrail,
 * models, limits) and revoke, effective at once on every process through key-cache invalidation.
 */
import { ServiceError } from '../../shared/errors.ts'
import { nanoToUsd } from '../../shared/money.ts'
import { generateApiKey } from '../keys/api-key.ts'
import { checkModelIds } from '../policy/allowlists.ts'
import { newKeyId } from './ids.ts'
import type { OperatorDeps } from './operator-deps.ts'

export type KeyOptions = {
  accountId: string
  name?: string
  rpm?: number
  tpm?: number
  concurrency?: number
  /** null: no cap; undefined: the configured default. */
  dailyLimitNano?: number | null
  monthlyLimitNano?: number | null
  models?: string[]
}

export async function createKey(deps: OperatorDeps, options: KeyOptions): Promise<{ id: string; key: string; prefix: string }> {
  // No models given means any model (the older behaviour of `key create`).
  const models = options.models && options.models.length > 0 ? checkModelIds(deps.catalog, options.models, 'models') : null
  const [account] = await deps.sql<{ kind: 'accountless' | 'identity' }[]>`SELECT kind FROM accounts WHERE id = ${options.accountId}`
  if (!account) throw new ServiceError('not_found', `No account ${options.accountId}.`)
  const id = newKeyId()
  const { key, prefix, hash } = generateApiKey()
  // Spend caps are on by default, lower for accountless keys (no identity, so no recovery if a key leaks).
  const defaults = account.kind === 'accountless' ? deps.keyDefaults.accountless : deps.keyDefaults
  const daily = options.dailyLimitNano === undefined ? defaults.dailyLimitNano : options.dailyLimitNano
  const monthly = options.monthlyLimitNano === undefined ? defaults.monthlyLimitNano : options.monthlyLimitNano
  await deps.sql`
    INSERT INTO api_keys (id, account_id, name, prefix, key_hash, rpm_limit, tpm_limit, concurrency_limit,
                          daily_limit_nano, monthly_limit_nano, allowed_models)
    VALUES (${id}, ${options.accountId}, ${options.name ?? ''}, ${prefix}, ${hash}, ${options.rpm ?? null}, ${options.tpm ?? null},
            ${options.concurrency ?? null}, ${daily}, ${monthly}, ${models})`
  // A cached "no such key" for this prefix must not outlive the creation.
  await deps.keys.invalidate({ prefix })
  return { id, key, prefix }
}

export async function revokeKey(deps: OperatorDeps, keyId: string): Promise<{ id: string; status: 'revoked' }> {
  const [row] = await deps.sql<{ prefix: string }[]>`
    UPDATE api_keys SET status = 'revoked', revoked_at = coalesce(revoked_at, now()) WHERE id = ${keyId} RETURNING prefix`
  if (!row) throw new ServiceError('not_found', `No key ${keyId}.`)
  await deps.keys.invalidate({ prefix: row.prefix })
  return { id: keyId, status: 'revoked' }
}

/** What `updateKey` may change: an absent field stays, null removes the limit (or the guardrail, or the model list). */
export type KeyChanges = {
  guardrailId?: string | null
  models?: string[] | null
  rpm?: number | null
  tpm?: number | null
  concurrency?: number | null
  dailyLimitNano?: number | null
  monthlyLimitNano?: number | null
}

export type KeyView = {
  id: string
  accountId: string
  name: string
  prefix: string
  status: string
  guardrailId: string | null
  models: string[] | null
  rpm: number | null
  tpm: number | null
  concurrency: number | null
  dailyLimitNano: number | null
  dailyLimitUsd: string | null
  monthlyLimitNano: number | null
  monthlyLimitUsd: string | null
}

type KeyRow = {
  id: string
  account_id: string
  name: string
  prefix: string
  status: string
  guardrail_id: string | null
  allowed_models: string[] | null
  rpm_limit: number | null
  tpm_limit: number | null
  concurrency_limit: number | null
  daily_limit_nano: number | null
  monthly_limit_nano: number | null
}

/** Changes a key's guardrail, models and limits; effective at once on every process. The guardrail must be one of the key's account. */
export async function updateKey(deps: OperatorDeps, keyId: string, changes: KeyChanges): Promise<KeyView> {
  const values: Record<string, unknown> = {}
  if (changes.models !== undefined) values.allowed_models = checkModelIds(deps.catalog, changes.models, 'models')
  const limits = { rpm: 'rpm_limit', tpm: 'tpm_limit', concurrency: 'concurrency_limit', dailyLimitNano: 'daily_limit_nano', monthlyLimitNano: 'monthly_limit_nano' } as const
  for (const [field, column] of Object.entries(limits) as [keyof typeof limits, string][]) {
    const value = changes[field]
    if (value === undefined) continue
    if (value !== null && (!Number.isSafeInteger(value) || value < 0)) {
      throw new ServiceError('invalid_request', `${field}: must be a whole number of at least 0, or null for no limit`, { param: field })
    }
    values[column] = value
  }
  if (changes.guardrailId !== undefined) values.guardrail_id = changes.guardrailId
  if (Object.keys(values).length === 0) {
    throw new ServiceError('invalid_request', 'Nothing to change: give guardrailId, models, rpm, tpm, concurrency, dailyUsd or monthlyUsd.')
  }
  const row = await deps.sql.begin(async (tx) => {
    const [key] = await tx<{ account_id: string }[]>`SELECT account_id FROM api_keys WHERE id = ${keyId} FOR UPDATE`
    if (!key) throw new ServiceError('not_found', `No key ${keyId}.`)
    if (changes.guardrailId) {
      // FOR SHARE: a guardrail being deleted (FOR UPDATE, then unassigned) cannot be assigned meanwhile.
      const [guardrail] = await tx<{ account_id: string }[]>`SELECT account_id FROM guardrails WHERE id = ${changes.guardrailId} FOR SHARE`
      if (!guardrail) throw new ServiceError('invalid_request', `guardrailId: no guardrail ${changes.guardrailId}`, { param: 'guardrailId' })
      if (guardrail.account_id !== key.account_id) {
        throw new ServiceError('invalid_request', `guardrailId: guardrail ${changes.guardrailId} belongs to another account than key ${keyId}`, { param: 'guardrailId' })
      }
    }
    const [updated] = await tx<KeyRow[]>`
      UPDATE api_keys SET ${tx(values)} WHERE id = ${keyId}
      RETURNING id, account_id, name, prefix, status, guardrail_id, allowed_models, rpm_limit, tpm_limit, concurrency_limit,
                daily_limit_nano, monthly_limit_nano`
    return updated!
  })
  await deps.keys.invalidate({ prefix: row.prefix })
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    prefix: row.prefix,
    status: row.status,
    guardrailId: row.guardrail_id,
    models: row.allowed_models,
    rpm: row.rpm_limit,
    tpm: row.tpm_limit,
    concurrency: row.concurrency_limit,
    dailyLimitNano: row.daily_limit_nano,
    dailyLimitUsd: row.daily_limit_nano === null ? null : nanoToUsd(row.daily_limit_nano),
    monthlyLimitNano: row.monthly_limit_nano,
    monthlyLimitUsd: row.monthly_limit_nano === null ? null : nanoToUsd(row.monthly_limit_nano),
  }
}
