/**
 * An account's keys as its members see them (the admin API): list, create, change and revoke, each only
 * within the account (another account's key is "not found"). Creation and changes go through the
 * operator's createKey/updateKey, so defaults, checks and key-cache invalidation are the same; the
 * secret and its hash never leave this module's queries.
 */
import type { ApiKey, ApiKeyChanges, CreatedApiKey, KeyStatus, NewApiKey } from '../../shared/schemas/admin/keys.ts'
import { ServiceError } from '../../shared/errors.ts'
import { nanoToUsd } from '../../shared/money.ts'
import type { Sql } from 'postgres'
import { checkModelIds } from '../policy/allowlists.ts'
import { createKey, revokeKey, updateKey, type KeyChanges } from './keys.ts'
import type { OperatorDeps } from './operator-deps.ts'

type Row = {
  id: string
  name: string
  prefix: string
  status: 'active' | 'revoked'
  expires_at: Date | null
  replaced_by: string | null
  rpm_limit: number | null
  tpm_limit: number | null
  concurrency_limit: number | null
  daily_limit_nano: number | null
  monthly_limit_nano: number | null
  allowed_models: string[] | null
  guardrail_id: string | null
  created_at: Date
  last_used_at: Date | null
  revoked_at: Date | null
}

// Never key_hash: nothing here can show a secret or its digest.
const columns = (sql: Sql) =>
  sql`id, name, prefix, status, expires_at, replaced_by, rpm_limit, tpm_limit, concurrency_limit, daily_limit_nano,
      monthly_limit_nano, allowed_models, guardrail_id, created_at, last_used_at, revoked_at`

export async function listAccountKeys(deps: OperatorDeps, accountId: string): Promise<{ keys: ApiKey[] }> {
  const rows = await deps.sql<Row[]>`SELECT ${columns(deps.sql)} FROM api_keys WHERE account_id = ${accountId} ORDER BY created_at DESC, id`
  const nowMs = deps.clock.now()
  return { keys: rows.map((row) => keyView(row, nowMs)) }
}

export async function readAccountKey(deps: OperatorDeps, accountId: string, keyId: string): Promise<ApiKey> {
  const [row] = await deps.sql<Row[]>`SELECT ${columns(deps.sql)} FROM api_keys WHERE id = ${keyId} AND account_id = ${accountId}`
  if (!row) throw noKey(keyId)
  return keyView(row, deps.clock.now())
}

/** Creates a key; absent spend caps get the configured defaults (caps are on unless set to null). */
export async function createAccountKey(deps: OperatorDeps, accountId: string, input: NewApiKey): Promise<CreatedApiKey> {
  // Checked here too, so refusals name this API's fields.
  const models = input.allowedModels == null ? undefined : checkModelIds(deps.catalog, input.allowedModels, 'allowedModels')!
  if (input.guardrailId) await requireGuardrail(deps.sql, accountId, input.guardrailId)
  const created = await createKey(deps, {
    accountId,
    name: input.name,
    rpm: input.rpmLimit ?? undefined,
    tpm: input.tpmLimit ?? undefined,
    concurrency: input.concurrency ?? undefined,
    dailyLimitNano: input.dailyLimitNano,
    monthlyLimitNano: input.monthlyLimitNano,
    models,
  })
  if (input.guardrailId) {
    try {
      await updateKey(deps, created.id, { guardrailId: input.guardrailId })
    } catch (error) {
      // The guardrail was deleted in between: a key without the guardrail asked for must not stay usable.
      await revokeKey(deps, created.id)
      throw error
    }
  }
  return { ...(await readAccountKey(deps, accountId, created.id)), key: created.key }
}

export async function updateAccountKey(deps: OperatorDeps, accountId: string, keyId: string, changes: ApiKeyChanges): Promise<ApiKey> {
  await requireKey(deps.sql, accountId, keyId)
  if (changes.allowedModels) checkModelIds(deps.catalog, changes.allowedModels, 'allowedModels')
  if (changes.guardrailId) await requireGuardrail(deps.sql, accountId, changes.guardrailId)
  const policy: KeyChanges = {
    guardrailId: changes.guardrailId,
    models: changes.allowedModels,
    rpm: changes.rpmLimit,
    tpm: changes.tpmLimit,
    concurrency: changes.concurrency,
    dailyLimitNano: changes.dailyLimitNano,
    monthlyLimitNano: changes.monthlyLimitNano,
  }
  const changesPolicy = Object.values(policy).some((value) => value !== undefined)
  if (!changesPolicy && changes.name === undefined) {
    throw new ServiceError(
      'invalid_request',
      'Nothing to change: give name, rpmLimit, tpmLimit, concurrency, dailyLimitNano, monthlyLimitNano, allowedModels or guardrailId.',
    )
  }
  if (changesPolicy) await updateKey(deps, keyId, policy)
  // The name is not part of the cached key record: no invalidation needed.
  if (changes.name !== undefined) await deps.sql`UPDATE api_keys SET name = ${changes.name} WHERE id = ${keyId}`
  return readAccountKey(deps, accountId, keyId)
}

/** Disables the key at once on every process (also a key in its rotation grace). */
export async function revokeAccountKey(deps: OperatorDeps, accountId: string, keyId: string): Promise<ApiKey> {
  await requireKey(deps.sql, accountId, keyId)
  await revokeKey(deps, keyId)
  return readAccountKey(deps, accountId, keyId)
}

export function keyStatus(row: Pick<Row, 'status' | 'expires_at'>, nowMs: number): KeyStatus {
  if (row.status === 'revoked') return 'revoked'
  if (row.expires_at === null) return 'active'
  return row.expires_at.getTime() > nowMs ? 'in_grace' : 'expired'
}

function keyView(row: Row, nowMs: number): ApiKey {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    status: keyStatus(row, nowMs),
    expiresAt: iso(row.expires_at),
    replacedBy: row.replaced_by,
    rpmLimit: row.rpm_limit,
    tpmLimit: row.tpm_limit,
    concurrency: row.concurrency_limit,
    dailyLimitNano: row.daily_limit_nano,
    dailyLimitUsd: row.daily_limit_nano === null ? null : nanoToUsd(row.daily_limit_nano),
    monthlyLimitNano: row.monthly_limit_nano,
    monthlyLimitUsd: row.monthly_limit_nano === null ? null : nanoToUsd(row.monthly_limit_nano),
    allowedModels: row.allowed_models,
    guardrailId: row.guardrail_id,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: iso(row.last_used_at),
    revokedAt: iso(row.revoked_at),
  }
}

const iso = (date: Date | null) => (date ? date.toISOString() : null)

const noKey = (keyId: string) => new ServiceError('not_found', `No key ${keyId} in this account.`)

async function requireKey(sql: Sql, accountId: string, keyId: string): Promise<void> {
  const [row] = await sql`SELECT 1 FROM api_keys WHERE id = ${keyId} AND account_id = ${accountId}`
  if (!row) throw noKey(keyId)
}

// Another account's guardrail reads as absent, like its keys.
async function requireGuardrail(sql: Sql, accountId: string, guardrailId: string): Promise<void> {
  const [row] = await sql`SELECT 1 FROM guardrails WHERE id = ${guardrailId} AND account_id = ${accountId}`
  if (!row) throw new ServiceError('invalid_request', `guardrailId: no guardrail ${guardrailId} in this account`, { param: 'guardrailId' })
}
