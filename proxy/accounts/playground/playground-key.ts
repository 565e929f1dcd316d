/**
 * The account's playground key: an ordinary key named "Playground" (listed with the account's keys, with
 * the default spend caps, editable like any other), made on the first playground message. Its secret is
 * discarded at creation: the playground hands the key's record to the pipeline in process, so nothing
 * can present it over HTTP. A revoked or rotated-out playground key is replaced by a new one (its
 * rotation's replacement, when there is one) on the next message.
 */
import { createKey } from '../keys.ts'
import type { OperatorDeps } from '../operator-deps.ts'
import type { KeyRecord } from '../../core/key-record.ts'
import type { KeyRow } from '../../stores/keys/key-row.ts'
import { log } from '../../core/log.ts'

export const PLAYGROUND_KEY_NAME = 'Playground'

/** The account's playground key, if it has one (a left join: every column may be null). */
type Row = {
  [Column in 'id' | 'prefix' | 'status' | 'expires_at' | 'replaced_by']: KeyRow[Column] | null
}

export async function playgroundKey(deps: OperatorDeps, accountId: string): Promise<KeyRecord> {
  const [row] = await deps.sql<Row[]>`
    SELECT k.id, k.prefix, k.status, k.expires_at, k.replaced_by
    FROM accounts a LEFT JOIN api_keys k ON k.id = a.playground_key_id
    WHERE a.id = ${accountId}`
  if (row?.id && row.status === 'active' && row.expires_at === null) {
    const record = await keyRecord(deps, row.id, row.prefix!)
    if (record) return record
  }
  const replacement = row?.replaced_by
    ? await activeKey(deps, accountId, row.replaced_by)
    : undefined
  const candidate = replacement
    ? { keyId: replacement, created: false }
    : { keyId: await newPlaygroundKey(deps, accountId), created: true }
  const keyId = await adopt(deps, accountId, row?.id ?? null, candidate)
  const [key] = await deps.sql<
    { prefix: string }[]
  >`SELECT prefix FROM api_keys WHERE id = ${keyId}`
  const record = await keyRecord(deps, keyId, key!.prefix)
  if (!record) throw new Error(`playground key ${keyId} of ${accountId} not found after creation`)
  return record
}

async function keyRecord(
  deps: OperatorDeps,
  keyId: string,
  prefix: string,
): Promise<KeyRecord | undefined> {
  return (await deps.keys.get(prefix)).find((record) => record.id === keyId)
}

async function activeKey(
  deps: OperatorDeps,
  accountId: string,
  keyId: string,
): Promise<string | undefined> {
  const [key] = await deps.sql`
    SELECT 1 FROM api_keys WHERE id = ${keyId} AND account_id = ${accountId} AND status = 'active' AND expires_at IS NULL`
  return key ? keyId : undefined
}

async function newPlaygroundKey(deps: OperatorDeps, accountId: string): Promise<string> {
  const created = await createKey(deps, accountId, { name: PLAYGROUND_KEY_NAME })
  return created.id
}

/**
 * Makes the candidate the account's playground key unless another request replaced `staleId` first; then
 * that one is used (and a key this request created for nothing is revoked, so no unused key stays active).
 */
async function adopt(
  deps: OperatorDeps,
  accountId: string,
  staleId: string | null,
  candidate: { keyId: string; created: boolean },
): Promise<string> {
  const { keyId } = candidate
  const updated = await deps.sql`
    UPDATE accounts SET playground_key_id = ${keyId}
    WHERE id = ${accountId} AND playground_key_id IS NOT DISTINCT FROM ${staleId}
    RETURNING 1`
  if (updated.length > 0) return keyId
  const [current] = await deps.sql<
    { playground_key_id: string }[]
  >`SELECT playground_key_id FROM accounts WHERE id = ${accountId}`
  if (candidate.created) {
    const [unused] = await deps.sql<{ prefix: string }[]>`
      UPDATE api_keys SET status = 'revoked', revoked_at = now() WHERE id = ${keyId} RETURNING prefix`
    if (unused) await deps.keys.invalidate({ prefix: unused.prefix })
  }
  log.debug('playground key created concurrently; using the other', { accountId })
  return current!.playground_key_id
}
