/**
 * Stage 3: the key. `Authorization: Bearer <key>` (and, for the Messages style, `x-api-key`), checked
 * for format, found by its stored prefix in the key cache, and compared by sha256 digest in constant
 * time. Missing, malformed, unknown, revoked and expired keys all get the same 401; a suspended account
 * gets 403 `account_suspended`.
 */
import { ServiceError } from '../../shared/errors.ts'
import { digestsEqual, hashApiKey, KEY_PATTERN, STORED_PREFIX_LENGTH } from '../core/api-key.ts'
import type { Clock } from '../core/clock.ts'
import type { KeyCache } from '../stores/keys/key-cache.ts'
import { invalidKeyRefusal, type InvalidKeyLimits } from '../policy/invalid-keys.ts'
import type { KeyRecord } from '../core/key-record.ts'
import type { Call } from '../core/call.ts'
import { log } from '../core/log.ts'

/** A refusal carries the key when it was found (a suspended account's): its balance goes on the answer. */
export type AuthResult =
  | { ok: true; key: KeyRecord }
  | { ok: false; error: ServiceError; key?: KeyRecord }

const invalidKey = () =>
  new ServiceError(
    'invalid_api_key',
    'Invalid API key. Send a valid key as "Authorization: Bearer svc-live-…" (Messages-style requests may send it as "x-api-key" instead); create or rotate one in the dashboard.',
  )

/** The presented key, from the bearer header or (when the style allows it) x-api-key. */
export function presentedKey(headers: Headers, allowXApiKey: boolean): string | undefined {
  const authorization = headers.get('authorization')
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization)
    return match?.[1]
  }
  return allowXApiKey ? (headers.get('x-api-key')?.trim() ?? undefined) : undefined
}

export async function authenticate(
  presented: string | undefined,
  keys: KeyCache,
  nowMs: number,
): Promise<AuthResult> {
  if (!presented || !KEY_PATTERN.test(presented)) return { ok: false, error: invalidKey() }
  let records: KeyRecord[]
  try {
    records = await keys.get(presented.slice(0, STORED_PREFIX_LENGTH))
  } catch (error) {
    // A key not in the cache could not be read: fail closed, as for an unanswered admission.
    log.warn('key lookup failed', { error })
    return {
      ok: false,
      error: new ServiceError(
        'admission_unconfirmed',
        'The key could not be verified; the request was not sent and nothing was charged. Retry.',
      ),
    }
  }
  if (records.length === 0) return { ok: false, error: invalidKey() }
  const digest = hashApiKey(presented)
  const key = records.find((record) => digestsEqual(record.hash, digest))
  if (!key) return { ok: false, error: invalidKey() }
  return checkKey(key, nowMs)
}

/**
 * What a found key must also be: active, within its rotation grace, of an account not suspended. Also
 * applied to the key an in-process caller (the dashboard playground) hands the pipeline directly.
 */
export function checkKey(key: KeyRecord, nowMs: number): AuthResult {
  if (key.status !== 'active') return { ok: false, error: invalidKey() }
  if (key.expiresAtMs !== null && key.expiresAtMs <= nowMs)
    return { ok: false, error: invalidKey() }
  if (key.accountStatus === 'suspended') {
    return {
      ok: false,
      error: new ServiceError('account_suspended', 'This account is suspended. Contact support.'),
      key,
    }
  }
  return { ok: true, key }
}

/** Stage 3 for any API endpoint: the presented key, with the per-address limit applied to invalid ones. */
export async function authenticateRequest(
  gw: { keys: KeyCache; invalidKeys: InvalidKeyLimits; clock: Clock },
  request: Request,
  options: { allowXApiKey: boolean; address: () => string },
): Promise<AuthResult> {
  const auth = await authenticate(
    presentedKey(request.headers, options.allowXApiKey),
    gw.keys,
    gw.clock.now(),
  )
  if (auth.ok) return auth
  return {
    ok: false,
    error: await invalidKeyRefusal(gw.invalidKeys, options.address(), auth.error),
    key: auth.key,
  }
}

/**
 * What a request whose body was refused before its key was checked is told: a request without a valid
 * key is 401 whatever its body (the spec's rule 6), so the key's refusal when there is one, else the
 * body's. A key found goes on the call: it is the account's request, in its activity like any other.
 */
export async function bodyRefusal(
  call: Call,
  auth: AuthResult | Promise<AuthResult>,
  error: ServiceError,
): Promise<ServiceError> {
  const result = await auth
  call.key = result.key
  return result.ok ? error : result.error
}
