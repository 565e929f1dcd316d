/**
 * API keys, the one place they are created, read, changed and revoked: by the admin API (within the
 * session's account: another account's key is "not found"), the operator API and the CLI (any key), and
 * the account flows that make keys (accountless setup, the playground). One vocabulary, the admin
 * schemas' (`rpmLimit`, `dailyLimitNano`, `allowedModels`, …), and one view of a key. The plaintext is
 * returned once, at creation, and never stored; the secret's hash never leaves this module's queries.
 * Every change takes effect at once on every process, through key-cache invalidation.
 */
import type { Sql, TransactionSql } from 'postgres'
import { ServiceError } from '../../shared/errors.ts'
import { nanoToUsd } from '../../shared/money.ts'
import type {
  ApiKey,
  ApiKeyChanges,
  CreatedApiKey,
  KeyDefaults,
  KeyStatus,
  NewApiKey,
} from '../../shared/schemas/admin/keys.ts'
import { KEY_LABELS, nothingToChange } from '../../shared/schemas/admin/field-rules.ts'
import { generateApiKey } from '../core/api-key.ts'
import { liveSnapshot } from '../stores/admission/load-account.ts'
import type { KeyRow } from '../stores/keys/key-row.ts'
import { checkModelIds } from './settings/allowlists.ts'
import { newKeyId } from './ids.ts'
import type { OperatorDeps } from './operator-deps.ts'

type Db = Sql | TransactionSql

/** An account's key (admin API), or any key (operator API: no account given). */
export type KeyScope = { accountId?: string }

// Never key_hash: nothing here can show a secret or its digest.
const columns = (sql: Sql) =>
  sql`id, account_id, name, prefix, status, expires_at, replaced_by, rpm_limit, tpm_limit, concurrency_limit, daily_limit_nano,
      monthly_limit_nano, allowed_models, guardrail_id, limits_key_id, created_at, last_used_at, revoked_at`

/** The settable fields and their columns. */
const settable = {
  name: 'name',
  rpmLimit: 'rpm_limit',
  tpmLimit: 'tpm_limit',
  concurrency: 'concurrency_limit',
  dailyLimitNano: 'daily_limit_nano',
  monthlyLimitNano: 'monthly_limit_nano',
  allowedModels: 'allowed_models',
  guardrailId: 'guardrail_id',
} as const satisfies Record<keyof NewApiKey, string>

export async function listKeys(deps: OperatorDeps, accountId: string): Promise<{ keys: ApiKey[] }> {
  const rows = await deps.sql<
    KeyRow[]
  >`SELECT ${columns(deps.sql)} FROM api_keys WHERE account_id = ${accountId} ORDER BY created_at DESC, id`
  const nowMs = deps.clock.now()
  // What each key's caps count, by rotation lineage; the list still answers without the store.
  const live = await liveSnapshot(deps.sql, deps.store, accountId).catch(() => undefined)
  const byLineage = new Map(live?.keys.map((key) => [key.keyId, key]))
  return {
    keys: rows.map((row) => {
      const key = keyView(row, nowMs)
      if (!live || (key.status !== 'active' && key.status !== 'in_grace')) return key
      const counted = byLineage.get(row.limits_key_id)
      const held = counted?.heldNano ?? 0
      const today = (counted?.daySpentNano ?? 0) + held
      const month = (counted?.monthSpentNano ?? 0) + held
      const spend = {
        todayNano: today,
        todayUsd: nanoToUsd(today),
        monthNano: month,
        monthUsd: nanoToUsd(month),
        heldNano: held,
        heldUsd: nanoToUsd(held),
      }
      return { ...key, spend }
    }),
  }
}

export async function readKey(
  deps: Pick<OperatorDeps, 'sql' | 'clock'>,
  keyId: string,
  scope: KeyScope = {},
): Promise<ApiKey> {
  const [row] = await deps.sql<
    KeyRow[]
  >`SELECT ${columns(deps.sql)} FROM api_keys WHERE id = ${keyId} ${inScope(deps.sql, scope)}`
  if (!row) throw noKey(keyId, scope)
  return keyView(row, deps.clock.now())
}

/**
 * A new key of the account, with its secret this once. Absent spend caps get the configured defaults (on
 * unless set to null; lower for accountless accounts, which have no identity to recover a leaked key by).
 */
export async function createKey(
  deps: OperatorDeps,
  accountId: string,
  input: NewApiKey = {},
): Promise<CreatedApiKey> {
  const values = columnValues(deps, input)
  const id = newKeyId()
  const { key, prefix, hash } = generateApiKey()
  await deps.sql.begin(async (tx) => {
    const defaults = await keyDefaults({ ...deps, sql: tx }, accountId)
    if (input.guardrailId) await lockGuardrail(tx, accountId, input.guardrailId)
    await tx`
      INSERT INTO api_keys ${tx({
        daily_limit_nano: defaults.dailyLimitNano,
        monthly_limit_nano: defaults.monthlyLimitNano,
        name: '',
        ...values,
        id,
        account_id: accountId,
        prefix,
        key_hash: hash,
      })}`
  })
  // A cached "no such key" for this prefix must not outlive the creation.
  await deps.keys.invalidate({ prefix })
  return { ...(await readKey(deps, id)), key }
}

/** Changes a key: an absent field stays, null removes a limit (or the guardrail, or the model list). */
export async function updateKey(
  deps: OperatorDeps,
  keyId: string,
  changes: ApiKeyChanges,
  scope: KeyScope = {},
): Promise<ApiKey> {
  const values = columnValues(deps, changes)
  if (Object.keys(values).length === 0) {
    throw new ServiceError('invalid_request', nothingToChange(Object.values(KEY_LABELS)))
  }
  const prefixes = await deps.sql.begin(async (tx) => {
    const [key] = await tx<
      { account_id: string; prefix: string; limits_key_id: string }[]
    >`SELECT account_id, prefix, limits_key_id FROM api_keys WHERE id = ${keyId} ${inScope(tx, scope)} FOR UPDATE`
    if (!key) throw noKey(keyId, scope)
    if (changes.guardrailId) await lockGuardrail(tx, key.account_id, changes.guardrailId)
    await tx`UPDATE api_keys SET ${tx(values)} WHERE id = ${keyId}`
    // The keys of a rotation lineage draw on one set of rate and spend windows, so they have one set of
    // limits: a change reaches the lineage's other usable keys (a rotated key in its grace), or the old
    // key would go on spending the lineage's windows under the limits just lowered.
    const limits = Object.fromEntries(
      Object.entries(values).filter(([column]) => LINEAGE_COLUMNS.has(column)),
    )
    if (Object.keys(limits).length === 0) return [key.prefix]
    const others = await tx<{ prefix: string }[]>`
      UPDATE api_keys SET ${tx(limits)}
      WHERE limits_key_id = ${key.limits_key_id} AND id <> ${keyId} AND status <> 'revoked'
        AND (expires_at IS NULL OR expires_at > ${new Date(deps.clock.now())})
      RETURNING prefix`
    return [key.prefix, ...others.map((other) => other.prefix)]
  })
  for (const prefix of new Set(prefixes)) await deps.keys.invalidate({ prefix })
  return readKey(deps, keyId)
}

/** The columns of a key's rate limits and spend caps, which the keys of a rotation lineage share. */
const LINEAGE_COLUMNS: ReadonlySet<string> = new Set([
  settable.rpmLimit,
  settable.tpmLimit,
  settable.concurrency,
  settable.dailyLimitNano,
  settable.monthlyLimitNano,
])

/** Disables the key at once on every process (also a key in its rotation grace). */
export async function revokeKey(
  deps: Pick<OperatorDeps, 'sql' | 'keys' | 'clock'>,
  keyId: string,
  scope: KeyScope = {},
): Promise<ApiKey> {
  const [row] = await deps.sql<{ prefix: string }[]>`
    UPDATE api_keys SET status = 'revoked', revoked_at = coalesce(revoked_at, now()) WHERE id = ${keyId} ${inScope(deps.sql, scope)} RETURNING prefix`
  if (!row) throw noKey(keyId, scope)
  await deps.keys.invalidate({ prefix: row.prefix })
  return readKey(deps, keyId)
}

/** The spend caps a new key of the account gets when its creation leaves them out. */
export async function keyDefaults(
  deps: { sql: Db; keyDefaults: OperatorDeps['keyDefaults'] },
  accountId: string,
): Promise<KeyDefaults> {
  const [account] = await deps.sql<
    { kind: 'accountless' | 'identity' }[]
  >`SELECT kind FROM accounts WHERE id = ${accountId}`
  if (!account) throw new ServiceError('not_found', `No account ${accountId}.`)
  const caps = account.kind === 'accountless' ? deps.keyDefaults.accountless : deps.keyDefaults
  // A configured default of 0 is no cap, which a key records as null.
  const cap = (nano: number) => (nano > 0 ? nano : null)
  const usd = (nano: number) => (nano > 0 ? nanoToUsd(nano) : null)
  return {
    dailyLimitNano: cap(caps.dailyLimitNano),
    dailyLimitUsd: usd(caps.dailyLimitNano),
    monthlyLimitNano: cap(caps.monthlyLimitNano),
    monthlyLimitUsd: usd(caps.monthlyLimitNano),
  }
}

export function keyStatus(row: Pick<KeyRow, 'status' | 'expires_at'>, nowMs: number): KeyStatus {
  if (row.status === 'revoked') return 'revoked'
  if (row.expires_at === null) return 'active'
  return row.expires_at.getTime() > nowMs ? 'in_grace' : 'expired'
}

function keyView(row: KeyRow, nowMs: number): ApiKey {
  return {
    id: row.id,
    accountId: row.account_id,
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

/** The columns to write for the fields given; the model list is checked against the catalog. */
function columnValues(
  deps: Pick<OperatorDeps, 'catalog'>,
  fields: ApiKeyChanges,
): Record<string, unknown> {
  const values: Record<string, unknown> = {}
  for (const [field, column] of Object.entries(settable) as [keyof ApiKeyChanges, string][]) {
    const value = fields[field]
    if (value === undefined) continue
    values[column] =
      field === 'allowedModels' && value !== null
        ? checkModelIds(deps.catalog, value as string[], 'allowedModels')
        : value
  }
  return values
}

/** The guardrail must be the account's; FOR SHARE: one being deleted (FOR UPDATE, then unassigned) cannot be assigned meanwhile. */
async function lockGuardrail(tx: Db, accountId: string, guardrailId: string): Promise<void> {
  const [row] =
    await tx`SELECT 1 FROM guardrails WHERE id = ${guardrailId} AND account_id = ${accountId} FOR SHARE`
  // Another account's guardrail reads as absent, like its keys.
  if (!row)
    throw new ServiceError(
      'invalid_request',
      `${KEY_LABELS.guardrailId}: no guardrail ${guardrailId} in this account.`,
      { param: 'guardrailId' },
    )
}

const inScope = (sql: Db, scope: KeyScope) =>
  scope.accountId === undefined ? sql`` : sql`AND account_id = ${scope.accountId}`

const iso = (date: Date | null) => (date ? date.toISOString() : null)

const noKey = (keyId: string, scope: KeyScope) =>
  new ServiceError(
    'not_found',
    `No key ${keyId}${scope.accountId === undefined ? '' : ' in this account'}.`,
  )
