/**
 * The admission store inside one process: the embedded default when no REDIS_URL is set. Each decision
 * runs synchronously between awaits, which makes it atomic within the process, with the same rules as
 * the Redis scripts (see lua/). State does not survive a restart; it is loaded again from Postgres.
 */
import { bucketOf, calendar, count, newCounter, roll } from './windows.ts'
import {
  HOLD_DEADLINE_MS,
  type AccountSeed,
  type AccountSnapshot,
  type AdmissionStore,
  type AdmitInput,
  type AdmitResult,
  type CreditResult,
  type LedgerEntry,
  type ReleaseResult,
  type SettleInput,
  type SettleResult,
  type SweepResult,
} from './store.ts'

import {
  ended,
  endHold,
  guardrailState,
  keyState,
  rollSpend,
  type AccountState,
} from './memory-state.ts'
import { rateRefusal, spendRefusal } from './memory-limits.ts'

const CREDIT_MEMORY_MS = 3 * 86_400_000

export class MemoryAdmissionStore implements AdmissionStore {
  readonly kind = 'memory'
  private readonly accounts = new Map<string, AccountState>()

  /** `clock` is replaceable so tests can move time; `holdDeadlineMs` is the spec's 20 minutes unless shortened. */
  constructor(
    private readonly clock: () => number = Date.now,
    private readonly holdDeadlineMs = HOLD_DEADLINE_MS,
  ) {}

  async admit(input: AdmitInput): Promise<AdmitResult> {
    const account = this.accounts.get(input.accountId)
    if (!account) return { ok: false, reason: 'cold' }
    if (account.holds.has(input.requestId)) return { ok: false, reason: 'duplicate' }
    const now = this.clock()
    const bucket = bucketOf(now)
    const key = keyState(account, input.keyId)
    const available = account.balance - account.held
    for (const counter of [key.requests, key.tokens, account.requests, account.tokens])
      roll(counter, bucket)
    const { tokens } = input

    const dates = calendar(now)
    const refused =
      rateRefusal(account, key, input, now, available) ??
      spendRefusal(account, key, input, dates, available)
    if (refused) return refused
    const { day, month, dayEndMs } = dates
    const guardrail = input.guardrail && guardrailState(account, input.guardrail.id, month)
    const free = input.freePerDay !== undefined
    if (free) {
      if (account.freeDay !== day) Object.assign(account, { freeDay: day, freeUsed: 0 })
      if (account.freeUsed >= input.freePerDay!) {
        return {
          ok: false,
          reason: 'free',
          allowance: input.freePerDay!,
          retryAfterMs: dayEndMs - now,
          availableNano: available,
        }
      }
    }
    if (available < input.holdNano)
      return { ok: false, reason: 'credits', availableNano: available }

    if (free) account.freeUsed += 1
    if (guardrail) guardrail.held += input.holdNano

    for (const limits of [key, account]) {
      count(limits.requests, 1)
      count(limits.tokens, tokens)
    }
    account.held += input.holdNano
    account.inFlight += 1
    key.held += input.holdNano
    key.inFlight += 1
    account.holds.set(input.requestId, {
      keyId: input.keyId,
      amount: input.holdNano,
      tokens,
      bucket,
      deadlineMs: now + (input.holdDeadlineMs ?? this.holdDeadlineMs),
      guardrailId: input.guardrail?.id,
      free,
    })
    return { ok: true, availableNano: available - input.holdNano, nowMs: now }
  }

  async settle(input: SettleInput): Promise<SettleResult> {
    const account = this.accounts.get(input.accountId)
    const hold = account?.holds.get(input.requestId)
    if (!account || !hold) return ended(account, input.requestId)
    const now = this.clock()
    const charged = input.forgive ? 0 : Math.min(input.costNano, hold.amount)
    const writtenOff = input.costNano - charged
    const key = endHold(account, input.requestId, hold, input.tokens, now)
    const { day, month } = calendar(now)
    rollSpend(key, day, month)
    key.daySpent += charged
    key.monthSpent += charged
    if (hold.guardrailId) guardrailState(account, hold.guardrailId, month).monthSpent += charged
    account.balance -= charged
    if (charged > 0 || writtenOff > 0) {
      account.outbox.set(input.requestId, {
        requestId: input.requestId,
        accountId: input.accountId,
        keyId: hold.keyId,
        chargedNano: charged,
        writtenOffNano: writtenOff,
        atMs: now,
        record: input.record,
      })
    }
    return {
      status: 'settled',
      chargedNano: charged,
      writtenOffNano: writtenOff,
      availableNano: account.balance - account.held,
      again: false,
    }
  }

  async release(accountId: string, requestId: string): Promise<ReleaseResult> {
    const account = this.accounts.get(accountId)
    const hold = account?.holds.get(requestId)
    if (!account || !hold) return ended(account, requestId)
    const now = this.clock()
    endHold(account, requestId, hold, 0, now)
    // A released free request gives its place in the day's allowance back.
    if (hold.free && account.freeDay === calendar(now).day)
      account.freeUsed = Math.max(0, account.freeUsed - 1)
    return { status: 'released', availableNano: account.balance - account.held }
  }

  async seed(accountId: string, seed: AccountSeed): Promise<boolean> {
    if (this.accounts.has(accountId)) return false
    const now = this.clock()
    const { day, month } = calendar(now)
    const account: AccountState = {
      balance: seed.balanceNano,
      held: 0,
      inFlight: 0,
      requests: newCounter(),
      tokens: newCounter(),
      keys: new Map(),
      guardrails: new Map(
        seed.guardrailSpend.map((spend) => [
          spend.guardrailId,
          { held: 0, month, monthSpent: spend.monthSpentNano },
        ]),
      ),
      freeDay: day,
      freeUsed: 0,
      holds: new Map(),
      outbox: new Map(),
      credits: new Map(seed.recentCreditIds.map((id) => [id, now])),
    }
    for (const spend of seed.keySpend) {
      const key = keyState(account, spend.keyId)
      Object.assign(key, {
        day,
        daySpent: spend.daySpentNano,
        month,
        monthSpent: spend.monthSpentNano,
      })
    }
    this.accounts.set(accountId, account)
    return true
  }

  async credit(accountId: string, entryId: string, amountNano: number): Promise<CreditResult> {
    const account = this.accounts.get(accountId)
    if (!account) return { status: 'cold' }
    if (account.credits.has(entryId))
      return { status: 'again', availableNano: account.balance - account.held }
    const now = this.clock()
    account.balance += amountNano
    account.credits.set(entryId, now)
    for (const [id, at] of account.credits)
      if (at < now - CREDIT_MEMORY_MS) account.credits.delete(id)
    return { status: 'applied', availableNano: account.balance - account.held }
  }

  async extend(accountId: string, requestIds: string[]): Promise<number> {
    const account = this.accounts.get(accountId)
    if (!account) return 0
    const deadlineMs = this.clock() + this.holdDeadlineMs
    let extended = 0
    for (const requestId of requestIds) {
      const hold = account.holds.get(requestId)
      if (hold) {
        hold.deadlineMs = deadlineMs
        extended += 1
      }
    }
    return extended
  }

  async sweep(): Promise<SweepResult> {
    const now = this.clock()
    const expired: SweepResult['expired'] = []
    for (const [accountId, account] of this.accounts) {
      for (const [requestId, hold] of account.holds) {
        if (hold.deadlineMs > now) continue
        endHold(account, requestId, hold, hold.tokens, now)
        expired.push({ accountId, requestId })
      }
    }
    return { expired }
  }

  async pendingLedger(olderThanMs: number): Promise<LedgerEntry[]> {
    const cutoff = this.clock() - olderThanMs
    return [...this.accounts.values()].flatMap((account) =>
      [...account.outbox.values()].filter((entry) => entry.atMs <= cutoff),
    )
  }

  async ackLedger(entries: { accountId: string; requestId: string }[]): Promise<void> {
    for (const entry of entries) this.accounts.get(entry.accountId)?.outbox.delete(entry.requestId)
  }

  /** In one process every call is answered: nothing is sent again after recovery, so no mark is kept. */
  ackRecovered(entries: LedgerEntry[]): Promise<void> {
    return this.ackLedger(entries)
  }

  async snapshot(accountId: string): Promise<AccountSnapshot> {
    const account = this.accounts.get(accountId)
    if (!account)
      return {
        loaded: false,
        balanceNano: 0,
        heldNano: 0,
        availableNano: 0,
        inFlight: 0,
        keys: [],
        guardrails: [],
        freeUsedToday: 0,
      }
    const { day, month } = calendar(this.clock())
    return {
      loaded: true,
      balanceNano: account.balance,
      heldNano: account.held,
      availableNano: account.balance - account.held,
      inFlight: account.inFlight,
      keys: [...account.keys].map(([keyId, key]) => ({
        keyId,
        heldNano: key.held,
        inFlight: key.inFlight,
        daySpentNano: key.day === day ? key.daySpent : 0,
        monthSpentNano: key.month === month ? key.monthSpent : 0,
      })),
      guardrails: [...account.guardrails].map(([guardrailId, guardrail]) => ({
        guardrailId,
        heldNano: guardrail.held,
        monthSpentNano: guardrail.month === month ? guardrail.monthSpent : 0,
      })),
      freeUsedToday: account.freeDay === day ? account.freeUsed : 0,
    }
  }

  async close(): Promise<void> {}

  async ping(): Promise<void> {}
}
