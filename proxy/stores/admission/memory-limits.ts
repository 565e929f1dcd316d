/**
 * The in-process store's limit checks, in the order the Redis scripts make them (lua/admit.lua): the
 * key's concurrency, requests and tokens per minute, then the account's; then the key's daily and
 * monthly spend caps and the guardrail's monthly budget. Each answers with the first refusal, or
 * undefined when the request is within every limit.
 */
import type { AccountState, KeyState } from './memory-state.ts'
import { guardrailState, rollSpend } from './memory-state.ts'
import type { AdmitInput, AdmitResult, RateLimitName } from './store.ts'
import { rateEstimate, rateRetryMs, type calendar, type RateCounter } from './windows.ts'

type Refusal = Exclude<AdmitResult, { ok: true }>

/** Rates and concurrency: the key's, then the account's. */
export function rateRefusal(
  account: AccountState,
  key: KeyState,
  input: AdmitInput,
  now: number,
  availableNano: number,
): Refusal | undefined {
  const over = (
    limit: RateLimitName,
    value: number,
    counter: RateCounter,
    cost: number,
  ): Refusal | undefined =>
    value > 0 && rateEstimate(counter, now) + cost > value
      ? {
          ok: false,
          reason: 'rate',
          limit,
          value,
          retryAfterMs: rateRetryMs(counter, now, value, cost),
          availableNano,
        }
      : undefined
  const busy = (limit: RateLimitName, value: number, inFlight: number): Refusal | undefined =>
    value > 0 && inFlight >= value
      ? { ok: false, reason: 'rate', limit, value, retryAfterMs: 1000, availableNano }
      : undefined
  const { keyLimits: kl, accountLimits: al, tokens } = input
  return (
    busy('key_concurrency', kl.concurrency, key.inFlight) ??
    over('key_rpm', kl.rpm, key.requests, 1) ??
    over('key_tpm', kl.tpm, key.tokens, tokens) ??
    busy('account_concurrency', al.concurrency, account.inFlight) ??
    over('account_rpm', al.rpm, account.requests, 1) ??
    over('account_tpm', al.tpm, account.tokens, tokens)
  )
}

/** Spend: the key's daily and monthly caps, then the guardrail's monthly budget (open holds count). */
export function spendRefusal(
  account: AccountState,
  key: KeyState,
  input: AdmitInput,
  { day, month, dayEndMs, monthEndMs }: ReturnType<typeof calendar>,
  availableNano: number,
): Refusal | undefined {
  const { keyLimits: kl, holdNano } = input
  rollSpend(key, day, month)
  if (kl.dailyNano > 0 && key.daySpent + key.held + holdNano > kl.dailyNano) {
    return {
      ok: false,
      reason: 'spend',
      window: 'daily',
      capNano: kl.dailyNano,
      resetAtMs: dayEndMs,
      availableNano,
    }
  }
  if (kl.monthlyNano > 0 && key.monthSpent + key.held + holdNano > kl.monthlyNano) {
    return {
      ok: false,
      reason: 'spend',
      window: 'monthly',
      capNano: kl.monthlyNano,
      resetAtMs: monthEndMs,
      availableNano,
    }
  }
  const budget = input.guardrail?.budgetNano ?? 0
  if (!input.guardrail || budget <= 0) return undefined
  const guardrail = guardrailState(account, input.guardrail.id, month)
  if (guardrail.monthSpent + guardrail.held + holdNano <= budget) return undefined
  return {
    ok: false,
    reason: 'spend',
    window: 'guardrail',
    capNano: budget,
    resetAtMs: monthEndMs,
    availableNano,
  }
}
