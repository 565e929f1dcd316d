/**
 * Per-address and per-recipient limits of the sign-in surface: wrong dashboard links, mails sent, wallet
 * nonces and sign-ins (a minute's window), accountless accounts created (a day's). Fixed windows in the
 * shared address limiter (Redis when configured), so the limit holds across processes. Like the invalid-key limit, these protect the service and cannot be
 * raised; a limiter that cannot answer lets the attempt through rather than locking everyone out.
 */
import { ServiceError } from '../../../shared/errors.ts'
import type { AddressLimiter } from '../../stores/address-limits.ts'
import { log } from '../../core/log.ts'
import { hashSecret } from './secrets.ts'

export type AttemptScope =
  | 'dashboard-link'
  | 'sign-in-mail'
  | 'mail-recipient'
  | 'wallet'
  | 'accountless-setup'

const WINDOWS = { minute: 60_000, day: 86_400_000 }

/** Counts one attempt; past `limit` in the window, throws 429 `usage_limit_exceeded` with Retry-After. */
export async function countAttempt(
  limiter: AddressLimiter,
  scope: AttemptScope,
  who: string,
  limit: number,
  what: string,
  per: keyof typeof WINDOWS = 'minute',
): Promise<void> {
  let decision
  try {
    decision = await limiter.hit(scope, who, limit, WINDOWS[per])
  } catch (error) {
    log.warn('sign-in attempt limit not checked', { scope, error })
    return
  }
  if (!decision.ok) {
    throw new ServiceError(
      'usage_limit_exceeded',
      `Too many ${what}: ${limit} a ${per} are allowed (a limit that cannot be raised). Retry later.`,
      {
        retryAfterMs: decision.retryAfterMs,
      },
    )
  }
}

/** A recipient as a limiter key: the address's digest, so no e-mail address is kept in Redis. */
export function recipientKey(email: string): string {
  return Buffer.from(hashSecret(email)).toString('base64url')
}
