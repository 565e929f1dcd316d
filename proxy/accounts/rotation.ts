/**
 * Key rotation, shared by the API server's `POST /keys/:id/rotate` (authenticated by the key itself) and
 * the admin API's: a new key with the old one's name, limits, models and guardrail, counted
 * in the same rate and spend windows as the old one (its lineage's, `limits_key_id`), and the
 * old key working for 24 more hours (spec: key rotation grace), then refused as 401 invalid_api_key by
 * the gateway, which compares `expires_at` with the same clock. A key already rotated, or revoked, is
 * not rotated again (409): its replacement is the key to rotate. A key in its grace only makes API calls:
 * it may not rotate a key or claim the account (a leaked key rotated out would otherwise rotate its
 * replacement and keep a key that never expires). Over the API a key rotates only itself: a key limited to
 * one model or a small cap must not obtain the secret of a broader one.
 */
import type { RotatedKey } from '../../shared/schemas/admin/keys.ts'
import { ServiceError } from '../../shared/errors.ts'
import { generateApiKey } from '../core/api-key.ts'
import type { KeyRecord } from '../core/key-record.ts'
import type { KeyRow } from '../stores/keys/key-row.ts'
import { newKeyId } from './ids.ts'
import type { OperatorDeps } from './operator-deps.ts'

export const ROTATION_GRACE_MS = 24 * 60 * 60 * 1000

/** Refuses the rotation of another key than the calling one (403). */
export function requireSelf(key: Pick<KeyRecord, 'id'>, keyId: string): void {
  if (key.id === keyId) return
  throw new ServiceError(
    'forbidden',
    `A key can rotate only itself: call POST /keys/${key.id}/rotate with it, or rotate ${keyId} with ${keyId} itself or in the dashboard.`,
  )
}

/** Refuses an account operation (rotation, claim) asked with a key that was rotated out (403). */
export function requireCurrentKey(key: Pick<KeyRecord, 'id' | 'expiresAtMs'>): void {
  if (key.expiresAtMs === null) return
  throw new ServiceError(
    'forbidden',
    `Key ${key.id} was rotated out: it makes API calls until ${new Date(key.expiresAtMs).toISOString()}, but cannot rotate keys or claim the account. Use the key that replaced it.`,
  )
}

type OldKey = Pick<KeyRow, 'prefix' | 'status' | 'expires_at' | 'replaced_by'>

export async function rotateKey(
  deps: Pick<OperatorDeps, 'sql' | 'keys' | 'clock'>,
  accountId: string,
  keyId: string,
): Promise<RotatedKey> {
  const nowMs = deps.clock.now()
  const expiresAt = new Date(nowMs + ROTATION_GRACE_MS)
  const id = newKeyId()
  const { key, prefix, hash } = generateApiKey()
  const old = await deps.sql.begin(async (tx) => {
    // FOR UPDATE: of two rotations of one key, the second sees the first's expiry and is refused.
    const [row] = await tx<OldKey[]>`
      SELECT prefix, status, expires_at, replaced_by FROM api_keys WHERE id = ${keyId} AND account_id = ${accountId} FOR UPDATE`
    if (!row) throw new ServiceError('not_found', `No key ${keyId} in this account.`)
    if (row.status === 'revoked')
      throw new ServiceError('conflict', `Key ${keyId} is revoked; create a new key instead.`)
    if (row.expires_at) {
      const when = row.expires_at.getTime() > nowMs ? 'stops working' : 'stopped working'
      throw new ServiceError(
        'conflict',
        `Key ${keyId} was already rotated: it ${when} at ${row.expires_at.toISOString()}. Rotate its replacement ${row.replaced_by} instead.`,
      )
    }
    await tx`
      INSERT INTO api_keys (id, account_id, name, prefix, key_hash, rpm_limit, tpm_limit, concurrency_limit,
                            daily_limit_nano, monthly_limit_nano, allowed_models, guardrail_id, limits_key_id)
      SELECT ${id}, account_id, name, ${prefix}, ${hash}, rpm_limit, tpm_limit, concurrency_limit,
             daily_limit_nano, monthly_limit_nano, allowed_models, guardrail_id, limits_key_id
      FROM api_keys WHERE id = ${keyId}`
    await tx`UPDATE api_keys SET expires_at = ${expiresAt}, replaced_by = ${id} WHERE id = ${keyId}`
    return row
  })
  // The old key's record now carries its expiry; a cached "no such key" for the new prefix must go too.
  await deps.keys.invalidate({ prefix: old.prefix })
  await deps.keys.invalidate({ prefix })
  return { key, id, prefix, oldKey: { id: keyId, expiresAt: expiresAt.toISOString() } }
}
