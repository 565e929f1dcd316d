/**
 * Stage 7: admission, one atomic call to the admission store: rate and concurrency limits of the key and
 * the account, the key's spend caps counting open holds, and the balance against the hold. An account the
 * store has not loaded is loaded from Postgres once, then admitted. A store that does not answer in time
 * means 502 `admission_unconfirmed`: the request is not sent, and any hold it may have placed expires.
 */
import type { Sql } from 'postgres'
import { ServiceError } from '../../shared/errors.ts'
import { nanoToUsd } from '../../shared/money.ts'
import { loadAccount } from '../stores/admission/load-account.ts'
import type {
  AdmissionStore,
  AdmitInput,
  AdmitResult,
  RateLimitName,
} from '../stores/admission/store.ts'
import type { KeyRecord } from '../core/key-record.ts'
import { log } from '../core/log.ts'

export type AdmitDecision =
  | { ok: true; availableNano: number }
  | { ok: false; error: ServiceError; availableNano?: number }

/** What the admission checks of the key: its limits, its account's, and its guardrail's budget. */
export function keyAdmission(
  key: KeyRecord,
): Pick<AdmitInput, 'accountId' | 'keyId' | 'keyLimits' | 'accountLimits' | 'guardrail'> {
  return {
    accountId: key.accountId,
    // Limits are counted per rotation lineage (the ledger and the log name the key itself).
    keyId: key.limitsId,
    keyLimits: key.limits,
    accountLimits: key.accountLimits,
    guardrail: key.guardrail
      ? { id: key.guardrail.id, budgetNano: key.guardrail.budgetNano }
      : undefined,
  }
}

/** `lower`: what the client can lower to make the request cheaper, named as its request names it. */
export async function admitRequest(
  store: AdmissionStore,
  sql: Sql,
  input: AdmitInput,
  lower: string,
): Promise<AdmitDecision> {
  let result: AdmitResult
  try {
    result = await store.admit(input)
    if (!result.ok && result.reason === 'cold') {
      await loadAccount(sql, store, input.accountId)
      result = await store.admit(input)
    }
  } catch (error) {
    log.warn('admission unconfirmed', { requestId: input.requestId, error })
    return {
      ok: false,
      error: new ServiceError(
        'admission_unconfirmed',
        'The request could not be admitted and was not sent. Nothing was charged; retry.',
      ),
    }
  }
  if (result.ok) return { ok: true, availableNano: result.availableNano }
  switch (result.reason) {
    case 'credits':
      return {
        ok: false,
        availableNano: result.availableNano,
        error: new ServiceError(
          'insufficient_credits',
          `Insufficient credits: this request can cost up to $${nanoToUsd(input.holdNano)} and the available balance is $${nanoToUsd(Math.max(0, result.availableNano))}. ` +
            `Add credits (on team accounts only the owner can top up), or lower ${lower}.`,
        ),
      }
    case 'spend': {
      const limit =
        result.window === 'guardrail'
          ? "The guardrail's monthly budget"
          : `This key's ${result.window} spend limit`
      // A request whose worst case alone is above the cap fails after the reset too: say what to lower.
      const alone =
        input.holdNano > result.capNano
          ? `: this request can cost up to $${nanoToUsd(input.holdNano)}, more than the whole limit. Lower ${lower} or raise the limit`
          : ' (requests in progress count)'
      return {
        ok: false,
        availableNano: result.availableNano,
        error: new ServiceError(
          'spend_limit_exceeded',
          `${limit} of $${nanoToUsd(result.capNano)} would be exceeded${alone}. ` +
            `It resets at ${new Date(result.resetAtMs).toISOString().replace('.000Z', 'Z')}.`,
        ),
      }
    }
    case 'free':
      return {
        ok: false,
        availableNano: result.availableNano,
        error: new ServiceError(
          'free_quota_exceeded',
          `The free allowance of ${result.allowance} requests per day is used up; it is shared by all keys of the account. ` +
            'Retry after the time in Retry-After, or name a paid model.',
          { retryAfterMs: result.retryAfterMs },
        ),
      }
    case 'rate': {
      // Estimated above a tokens-per-minute limit on its own, the request is refused after any wait:
      // the SDKs are told not to retry it (they would sit through Retry-After twice for the same refusal).
      const never = result.limit.endsWith('tpm') && input.tokens > result.value
      return {
        ok: false,
        availableNano: result.availableNano,
        error: new ServiceError(
          'usage_limit_exceeded',
          rateMessage(result.limit, result.value, input.tokens, lower),
          { retryAfterMs: result.retryAfterMs, ...(never && { retry: false }) },
        ),
      }
    }
    case 'cold':
    case 'duplicate':
      throw new Error(`admission answered ${result.reason} for ${input.requestId}`)
  }
}

/**
 * The account's available balance, for the balance header of an answer that ended before admission
 * read it (a refusal after the key was known, a catalog read, an image status). Undefined when the store
 * does not answer: the answer goes out without it rather than fail.
 */
export async function availableBalance(
  store: AdmissionStore,
  sql: Sql,
  accountId: string,
): Promise<number | undefined> {
  try {
    let snapshot = await store.snapshot(accountId)
    if (!snapshot.loaded) {
      await loadAccount(sql, store, accountId)
      snapshot = await store.snapshot(accountId)
    }
    return snapshot.availableNano
  } catch (error) {
    log.warn('balance not read for the answer', { accountId, error })
    return undefined
  }
}

function rateMessage(limit: RateLimitName, value: number, tokens: number, lower: string): string {
  const owner = limit.startsWith('key') ? 'this key' : 'this account'
  if (limit.endsWith('concurrency'))
    return `Too many concurrent requests: ${owner} allows ${value} at a time. Wait for one to finish or raise the limit.`
  if (limit.endsWith('rpm'))
    return `Rate limit reached: ${owner} allows ${value} requests per minute. Wait or raise the limit.`
  if (tokens > value) {
    return `This request is estimated at ${tokens} tokens, more than the ${value} tokens per minute ${owner} allows. Lower ${lower} or raise the limit.`
  }
  return `Rate limit reached: ${owner} allows ${value} tokens per minute (in-progress requests count with their estimate). Wait or raise the limit.`
}
