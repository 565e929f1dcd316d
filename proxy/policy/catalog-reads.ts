/**
 * Reads of the model catalog, on the API server (`GET /v1/models`, for the SDKs' `models.list()`; a key
 * is required, as for every API endpoint) and on the site server (`GET /api/v1/models`, public). Both
 * count reads per client address; past the limit, 429 `usage_limit_exceeded` with Retry-After.
 */
import { ServiceError } from '../../shared/errors.ts'
import type { AddressLimiter } from '../stores/address-limits.ts'
import { log } from '../core/log.ts'

export type CatalogReads = {
  limiter: AddressLimiter
  perMinute: number
  listing: Record<string, unknown>
}

/** The listing, or the refusal for an address past its limit. A limiter that cannot answer lets the read through. */
export async function readCatalog(
  reads: CatalogReads,
  address: string,
): Promise<Record<string, unknown> | ServiceError> {
  try {
    const decision = await reads.limiter.hit('catalog', address, reads.perMinute)
    if (!decision.ok) {
      return new ServiceError(
        'usage_limit_exceeded',
        `Too many catalog requests from this address: ${reads.perMinute} a minute are allowed (a per-address limit that cannot be raised).`,
        { retryAfterMs: decision.retryAfterMs },
      )
    }
  } catch (error) {
    log.warn('catalog read limit not checked', { error })
  }
  return reads.listing
}
