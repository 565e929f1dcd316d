/**
 * The in-process admission store's state of one account and the steps shared by its decisions; the
 * decisions themselves are in memory-store.ts.
 */
import { adjust, bucketOf, newCounter, roll, type RateCounter } from './windows.ts'
import type { LedgerEntry, SettleResult } from './store.ts'

export type Limits = { requests: RateCounter; tokens: RateCounter }

export type KeyState = Limits & {
  held: number
  inFlight: number
  day: number
  daySpent: number
  month: number
  monthSpent: number
}

export type Hold = {
  keyId: string
  amount: number
  tokens: number
  /** The two-second bucket its request and tokens were counted in. */
  bucket: number
  deadlineMs: number
  guardrailId?: string
  free: boolean
}

export type GuardrailState = { held: number; month: number; monthSpent: number }

export type AccountState = Limits & {
  balance: number
  held: number
  inFlight: number
  keys: Map<string, KeyState>
  guardrails: Map<string, GuardrailState>
  /** Requests on the free allowance during `freeDay` (UTC). */
  freeDay: number
  freeUsed: number
  /** Open holds only. */
  holds: Map<string, Hold>
  outbox: Map<string, LedgerEntry>
  credits: Map<string, number>
}

export function keyState(account: AccountState, keyId: string): KeyState {
  let key = account.keys.get(keyId)
  if (!key) {
    key = {
      requests: newCounter(),
      tokens: newCounter(),
      held: 0,
      inFlight: 0,
      day: 0,
      daySpent: 0,
      month: 0,
      monthSpent: 0,
    }
    account.keys.set(keyId, key)
  }
  return key
}

export function guardrailState(
  account: AccountState,
  guardrailId: string,
  month: number,
): GuardrailState {
  let guardrail = account.guardrails.get(guardrailId)
  if (!guardrail) {
    guardrail = { held: 0, month, monthSpent: 0 }
    account.guardrails.set(guardrailId, guardrail)
  }
  if (guardrail.month !== month) Object.assign(guardrail, { month, monthSpent: 0 })
  return guardrail
}

export function rollSpend(key: KeyState, day: number, month: number): void {
  if (key.day !== day) Object.assign(key, { day, daySpent: 0 })
  if (key.month !== month) Object.assign(key, { month, monthSpent: 0 })
}

/** A settle or release that finds no open hold: settled before (its charge still in the outbox) or nothing to end. */
export function ended(account: AccountState | undefined, requestId: string): SettleResult {
  const availableNano = account ? account.balance - account.held : 0
  const pending = account?.outbox.get(requestId)
  if (!pending) return { status: 'missing', availableNano }
  return {
    status: 'settled',
    chargedNano: pending.chargedNano,
    writtenOffNano: pending.writtenOffNano,
    availableNano,
    again: true,
  }
}

/** Removes an open hold, returns its amount and slot, and moves its token estimate to `actualTokens` (while its bucket is in view); returns the key. */
export function endHold(
  account: AccountState,
  requestId: string,
  hold: Hold,
  actualTokens: number,
  now: number,
): KeyState {
  account.holds.delete(requestId)
  const key = keyState(account, hold.keyId)
  account.held -= hold.amount
  account.inFlight -= 1
  key.held -= hold.amount
  key.inFlight -= 1
  if (hold.guardrailId) account.guardrails.get(hold.guardrailId)!.held -= hold.amount
  const bucket = bucketOf(now)
  for (const counter of [account.tokens, key.tokens]) {
    roll(counter, bucket)
    adjust(counter, hold.bucket, actualTokens - hold.tokens)
  }
  for (const counter of [account.requests, key.requests]) roll(counter, bucket)
  return key
}
