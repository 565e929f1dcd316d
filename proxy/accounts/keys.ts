/**
 * Key lifecycle for operators: create (the plaintext is returned once and never stored) and revoke
 * (effective at once on every process through key-cache invalidation).
 */
import { ServiceError } from '../../shared/errors.ts'
import { generateApiKey } from '../keys/api-key.ts'
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
  const unknown = (options.models ?? []).filter((model) => !deps.catalog.models.has(model))
  if (unknown.length > 0) throw new ServiceError('invalid_request', `Unknown model IDs: ${unknown.join(', ')}.`, { param: 'models' })
  const [account] = await deps.sql`SELECT 1 FROM accounts WHERE id = ${options.accountId}`
  if (!account) throw new ServiceError('not_found', `No account ${options.accountId}.`)
  const id = newKeyId()
  const { key, prefix, hash } = generateApiKey()
  const daily = options.dailyLimitNano === undefined ? deps.keyDefaults.dailyLimitNano : options.dailyLimitNano
  const monthly = options.monthlyLimitNano === undefined ? deps.keyDefaults.monthlyLimitNano : options.monthlyLimitNano
  await deps.sql`
    INSERT INTO api_keys (id, account_id, name, prefix, key_hash, rpm_limit, tpm_limit, concurrency_limit,
                          daily_limit_nano, monthly_limit_nano, allowed_models)
    VALUES (${id}, ${options.accountId}, ${options.name ?? ''}, ${prefix}, ${hash}, ${options.rpm ?? null}, ${options.tpm ?? null},
            ${options.concurrency ?? null}, ${daily}, ${monthly}, ${options.models && options.models.length > 0 ? options.models : null})`
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
