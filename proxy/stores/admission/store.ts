/**
 * The admission store: the hot money and limit state of every account, changed only by atomic
 * decisions (admit, settle, release, expire). Two implementations share this contract: Redis (Lua
 * scripts, shared by many processes) and in-process (one process, embedded default).
 */
import type { AccountLimits, KeyLimits } from '../../core/key-record.ts'

export type AdmitInput = {
  requestId: string
  accountId: string
  keyId: string
  holdNano: number
  /** Token estimate counted against tokens-per-minute until the request settles. */
  tokens: number
  keyLimits: KeyLimits
  accountLimits: AccountLimits
  /** The key's guardrail: its monthly budget counts this request's hold and charge (0: no budget). */
  guardrail?: { id: string; budgetNano: number }
  /** A request on the account's free allowance: at most this many per UTC day, shared by its keys. */
  freePerDay?: number
  /** How long the hold may stay open unconfirmed (default: the store's, 20 minutes); an image's cost deadline. */
  holdDeadlineMs?: number
}

export type RateLimitName =
  | 'key_concurrency'
  | 'key_rpm'
  | 'key_tpm'
  | 'account_concurrency'
  | 'account_rpm'
  | 'account_tpm'

/** The key's daily and monthly caps, and its guardrail's monthly budget. */
export type SpendWindow = 'daily' | 'monthly' | 'guardrail'

export type AdmitResult =
  | { ok: true; availableNano: number; nowMs: number }
  | { ok: false; reason: 'cold' }
  | { ok: false; reason: 'duplicate' }
  | {
      ok: false
      reason: 'rate'
      limit: RateLimitName
      value: number
      retryAfterMs: number
      availableNano: number
    }
  | {
      ok: false
      reason: 'spend'
      window: SpendWindow
      capNano: number
      resetAtMs: number
      availableNano: number
    }
  | { ok: false; reason: 'free'; allowance: number; retryAfterMs: number; availableNano: number }
  | { ok: false; reason: 'credits'; availableNano: number }

export type SettleInput = {
  requestId: string
  accountId: string
  /** Full cost of what was delivered; the store charges at most the hold. */
  costNano: number
  /** Actual input plus output tokens, replacing the estimate in tokens-per-minute. */
  tokens: number
  /** Write the whole cost off (a broken stream that delivered under 50 output tokens). */
  forgive: boolean
  /**
   * The request's log row (JSON), kept with the charge in the outbox: a process that stops before
   * Postgres has the charge loses neither (the recovery writes both).
   */
  record?: string
}

/**
 * `again`: the hold was settled before and its charge still waits in the outbox (a retried call).
 * `missing`: no open hold and no pending charge: settled and written to Postgres, released, expired or
 * never admitted. Either way nothing more is charged.
 */
export type SettleResult =
  | {
      status: 'settled'
      chargedNano: number
      writtenOffNano: number
      availableNano: number
      again: boolean
      /**
       * A charge taken inside a lease reaches the shared store with the lease's next round: true once
       * it is there (with its outbox entry), false if it never got there. Its ledger rows wait for it,
       * so Postgres never has a charge the shared balance does not.
       */
      recorded?: Promise<boolean>
    }
  | { status: 'missing'; availableNano: number }

export type ReleaseResult = { status: 'released'; availableNano: number } | SettleResult

/** A charge waiting in the outbox until Postgres holds its ledger rows. */
export type LedgerEntry = {
  requestId: string
  accountId: string
  keyId: string
  chargedNano: number
  writtenOffNano: number
  atMs: number
  /** The request's log row (JSON) given to the settle, if any. */
  record?: string
}

/** What Postgres knows of an account, to load its state when the store has none. */
export type AccountSeed = {
  balanceNano: number
  /** Credit ledger entries already in balanceNano that a late credit call must not apply again. */
  recentCreditIds: string[]
  keySpend: { keyId: string; daySpentNano: number; monthSpentNano: number }[]
  /** Spend of the current UTC month by the keys assigned to each guardrail. */
  guardrailSpend: { guardrailId: string; monthSpentNano: number }[]
}

export type KeySnapshot = {
  keyId: string
  heldNano: number
  inFlight: number
  daySpentNano: number
  monthSpentNano: number
}

export type AccountSnapshot = {
  loaded: boolean
  balanceNano: number
  heldNano: number
  availableNano: number
  /** Open holds: requests admitted and not yet ended. */
  inFlight: number
  keys: KeySnapshot[]
  guardrails: { guardrailId: string; heldNano: number; monthSpentNano: number }[]
  /** Requests on the free allowance counted today (UTC). */
  freeUsedToday: number
  /**
   * Charges this process took inside its admission leases that Redis does not have yet: counted in the
   * balance above, and in the ledger once Redis has them (within a lease round).
   */
  unsentCharges?: number
}

export type CreditResult =
  | { status: 'applied' | 'again'; availableNano: number }
  | { status: 'cold' }

export type SweepResult = { expired: { accountId: string; requestId: string }[] }

export interface AdmissionStore {
  readonly kind: 'redis' | 'memory'
  admit(input: AdmitInput): Promise<AdmitResult>
  settle(input: SettleInput): Promise<SettleResult>
  release(accountId: string, requestId: string): Promise<ReleaseResult>
  /** Loads an account's state unless one is loaded; returns whether this call loaded it. */
  seed(accountId: string, seed: AccountSeed): Promise<boolean>
  /** Applies a credit Postgres recorded, once per ledger entry ID. */
  credit(accountId: string, entryId: string, amountNano: number): Promise<CreditResult>
  /** Keeps open holds of requests still running from expiring. */
  extend(accountId: string, requestIds: string[]): Promise<number>
  /** Expires holds past their deadline in every active account. */
  sweep(): Promise<SweepResult>
  /** Outbox entries older than `olderThanMs` (left by a process that stopped before writing them). */
  pendingLedger(olderThanMs: number): Promise<LedgerEntry[]>
  /** Removes outbox entries once Postgres has their ledger rows (written by the process that settled them). */
  ackLedger(entries: Pick<LedgerEntry, 'accountId' | 'requestId'>[]): Promise<void>
  /**
   * Outbox entries recovery wrote to Postgres. The process that settled them may still send them again
   * (its answer lost, its retry not yet through): they stay as marks for 30 minutes, so such a charge is
   * still taken once, and are no longer returned by `pendingLedger`.
   */
  ackRecovered(entries: LedgerEntry[]): Promise<void>
  snapshot(accountId: string): Promise<AccountSnapshot>
  close(): Promise<void>
  /** Resolves when the store answers (readiness probe); rejects when it does not. */
  ping(): Promise<void>
}

/** Spec: a hold whose admission was never confirmed is released within 20 minutes (HOLD_DEADLINE_MS). */
export const HOLD_DEADLINE_MS = 20 * 60_000
