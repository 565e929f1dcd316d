/**
 * Per-address limit on requests with an invalid key: past it, an address gets 429 with Retry-After
 * instead of 401, so keys cannot be guessed at speed. Only refused requests count, and a valid key is
 * never checked against it: a client that fixes its key works at once. The limit cannot be raised.
 */
import { ServiceError } from '../../shared/errors.ts'
import { log } from '../core/log.ts'
import type { AddressLimiter } from '../stores/address-limits.ts'

export type InvalidKeyLimits = { limiter: AddressLimiter; perMinute: number }

/** The refusal for an invalid key from `address`: the 401 itself, or 429 once the address is past its limit. */
export async function invalidKeyRefusal(
  limits: InvalidKeyLimits,
  address: string,
  error: ServiceError,
): Promise<ServiceError> {
  if (error.code !== 'invalid_api_key') return error
  try {
    const decision = await limits.limiter.hit('invalid-key', address, limits.perMinute)
    if (decision.ok) return error
    return new ServiceError(
      'usage_limit_exceeded',
      `Too many requests with an invalid API key from this address: ${limits.perMinute} a minute are allowed (a per-address limit that cannot be raised). Use a valid key.`,
      { retryAfterMs: decision.retryAfterMs },
    )
  } catch (failure) {
    log.warn('invalid-key limit not checked', { error: failure })
    return error
  }
}
