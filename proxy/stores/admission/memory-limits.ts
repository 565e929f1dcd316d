/**
 * The in-process store's limit checks, in the order the Redis scripts make them (lua/admit.lua): the
 * key's concurrency, requests and tokens per minute, then the account's; then the key's daily and
 * monthly spend caps and the guardrail's monthly budget. Each answers with the first refusal, or
 * undefined when the request is within every limit.
 */
import { guardrailState, rollSpend, type AccountState, type KeyState } from './memory-state.ts'
import type { AdmitInput, AdmitResult, RateLimitName, SpendWindow } from './store.ts'
import { rateCount, rateRetryMs, type calendar, type RateCounter } from './windows.ts'

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
    value > 0 && rateCount(counter) + cost > value
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
  const cap = (
    window: SpendWindow,
    capNano: number,
    usedNano: number,
    resetAtMs: number,
  ): Refusal | undefined =>
    capNano > 0 && usedNano + holdNano > capNano
      ? { ok: false, reason: 'spend', window, capNano, resetAtMs, availableNano }
      : undefined
  rollSpend(key, day, month)
  const budget = input.guardrail?.budgetNano ?? 0
  const guardrail =
    input.guardrail && budget > 0 ? guardrailState(account, input.guardrail.id, month) : undefined
  return (
    cap('daily', kl.dailyNano, key.daySpent + key.held, dayEndMs) ??
    cap('monthly', kl.monthlyNano, key.monthSpent + key.held, monthEndMs) ??
    (guardrail && cap('guardrail', budget, guardrail.monthSpent + guardrail.held, monthEndMs))
  )
}
