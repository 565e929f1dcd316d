/**
 * Admission leases on the Redis store: this process holds, per account, key and guardrail, a lease (an
 * open hold in Redis that takes money, concurrency slots, requests and tokens at once; lua/lease.lua)
 * and admits and settles requests inside it in memory. Every few milliseconds the lease's charges go to
 * Redis in one call (balance, spend windows, outbox), and the lease grows to what the key used lately.
 *
 * Money stays exact because a lease is a hold: the sum of what every process may admit never passes the
 * balance, a cap or a limit. A lease grows only while every limit keeps 16 times the growth for everyone
 * else, so near the end of the balance or a limit no lease grows and requests are decided one by one in
 * Redis, exactly as without leases; a request refused there while this process's leases of the account
 * still hold something gives them back and is decided again, and a lease is given back before it admits
 * under limits other than those it was granted under. A lease idle for a second is given back. When a
 * process dies, its leases expire at their deadline (LEASE_TTL_MS) like any hold: what they held returns
 * and nothing is charged, so what it delivered since its last call (at most one interval) is not charged.
 *
 * Requests on the free allowance and image requests (a hold deadline of their own) are always decided
 * in Redis. The lease itself is lease.ts; its calls to Redis are lease-calls.ts.
 */
import { log } from '../../core/log.ts'
import { LeaseCalls } from './lease-calls.ts'
import { EXPIRED, IDLE_MS, Lease, LEASE_PREFIX, limitsOf } from './lease.ts'
import { seeThroughLeases } from './lease-view.ts'
import type { RedisAdmissionStore } from './redis-store.ts'
import type {
  AccountSeed,
  AccountSnapshot,
  AdmissionStore,
  AdmitInput,
  AdmitResult,
  CreditResult,
  LedgerEntry,
  ReleaseResult,
  SettleInput,
  SettleResult,
  SweepResult,
} from './store.ts'

export type LeaseOptions = {
  /** How often each lease's charges go to Redis and the lease is resized. */
  intervalMs: number
  /** A lease not renewed for this long expires (its process stopped). */
  ttlMs: number
}

/** `epoch`: the lease's epoch at admission (Lease.end). */
type Open = { lease: Lease; holdNano: number; tokens: number; backed: boolean; epoch: number }

export class LeasedAdmissionStore implements AdmissionStore {
  readonly kind = 'redis'
  private readonly leases = new Map<string, Lease>()
  private readonly open = new Map<string, Open>()
  private readonly timer: Timer
  private generation = 0
  /** Rounds begun, of every lease: a snapshot read while one began is read again. */
  private rounds = 0
  private readonly processId = crypto.randomUUID().slice(0, 8)
  private readonly calls: LeaseCalls

  constructor(
    readonly inner: RedisAdmissionStore,
    private readonly options: LeaseOptions,
  ) {
    this.calls = new LeaseCalls(inner, options.ttlMs, (lease) => this.forget(lease))
    this.timer = setInterval(() => this.tickAll(), options.intervalMs)
    this.timer.unref?.()
  }

  async admit(input: AdmitInput): Promise<AdmitResult> {
    if ((input.freePerDay ?? -1) >= 0 || input.holdDeadlineMs !== undefined)
      return this.inner.admit(input)
    const lease = this.leaseFor(input)
    let now = Date.now()
    lease.noteDemand(input, now)
    // The limits changed since the lease grew (an operator lowered a cap, say): what it holds was granted
    // under the old ones, so it is given back first and the request is decided in Redis under the new ones.
    if (lease.granted && lease.grantedLimits !== limitsOf(input)) {
      lease.closing = true
      await lease.round
      await this.tick(lease)
      now = Date.now()
    }
    // Its grant's bucket ended (a rate limit applies): the growth in the next bucket, one call, is
    // awaited by every request that comes meanwhile instead of a call for each (a round already under
    // way may have begun before the bucket ended: then the next one).
    for (let round = 0; round < 2 && lease.awaitsGrowth(now); round++) {
      await this.tick(lease)
      now = Date.now()
    }
    if (lease.fits(input, now)) {
      lease.take(input)
      this.open.set(input.requestId, {
        lease,
        holdNano: input.holdNano,
        tokens: input.tokens,
        backed: true,
        epoch: lease.epoch,
      })
      return { ok: true, availableNano: lease.availableNano(), nowMs: now }
    }
    void this.tick(lease)
    const result = await this.inner.admit(input)
    if (result.ok || !('availableNano' in result) || result.reason === 'free') return result
    // Refused in Redis while leases of this process hold room of the account the request could have
    // used (this key's, or another key's holding the balance), or were giving it back meanwhile: give the
    // room back and decide again, so a lease never makes a request fail that would pass without one.
    const holding = [...this.leases.values()].filter(
      (other) =>
        other.input.accountId === input.accountId && (other.hasRoom() || other.round !== undefined),
    )
    if (holding.length === 0) return result
    for (const other of holding) if (other.hasRoom()) other.closing = true
    for (const other of holding) {
      await other.round
      if (other.closing) await this.tick(other)
    }
    return this.inner.admit(input)
  }

  async settle(input: SettleInput): Promise<SettleResult> {
    const open = this.open.get(input.requestId)
    if (!open) return this.inner.settle(input)
    this.open.delete(input.requestId)
    const chargedNano = input.forgive ? 0 : Math.min(input.costNano, open.holdNano)
    const writtenOffNano = input.costNano - chargedNano
    const { lease } = open
    if (open.backed) lease.end(open.holdNano, chargedNano, open.tokens - input.tokens, open.epoch)
    let recorded: Promise<boolean> | undefined
    if (chargedNano > 0 || writtenOffNano > 0) {
      // A request whose lease expired is charged outside any lease (the id of no open hold), by the
      // lease of its key that has rounds now (that one may be new, or this one given back since).
      const leaseId = open.backed ? lease.id : EXPIRED
      let holder = this.leases.get(lease.name)
      if (!holder) {
        holder = lease
        this.leases.set(lease.name, lease)
      }
      const { promise, resolve } = Promise.withResolvers<boolean>()
      holder.charges.push({
        leaseId,
        requestId: input.requestId,
        chargedNano,
        writtenOffNano,
        record: input.record ?? '',
        done: resolve,
      })
      recorded = promise
    }
    return {
      status: 'settled',
      chargedNano,
      writtenOffNano,
      availableNano: lease.availableNano(),
      again: false,
      recorded,
    }
  }

  async release(accountId: string, requestId: string): Promise<ReleaseResult> {
    const open = this.open.get(requestId)
    if (!open) return this.inner.release(accountId, requestId)
    this.open.delete(requestId)
    const { lease } = open
    if (open.backed) lease.end(open.holdNano, 0, open.tokens, open.epoch)
    return { status: 'released', availableNano: lease.availableNano() }
  }

  seed(accountId: string, seed: AccountSeed): Promise<boolean> {
    return this.inner.seed(accountId, seed)
  }

  credit(accountId: string, entryId: string, amountNano: number): Promise<CreditResult> {
    return this.inner.credit(accountId, entryId, amountNano)
  }

  extend(accountId: string, requestIds: string[]): Promise<number> {
    const remote = requestIds.filter((id) => !this.open.has(id))
    return this.inner
      .extend(accountId, remote)
      .then((count) => count + requestIds.length - remote.length)
  }

  async sweep(): Promise<SweepResult> {
    const { expired } = await this.inner.sweep()
    const leases = expired.filter((hold) => hold.requestId.startsWith(LEASE_PREFIX))
    for (const lease of leases) log.warn('an admission lease expired: its process stopped', lease)
    return { expired: expired.filter((hold) => !hold.requestId.startsWith(LEASE_PREFIX)) }
  }

  pendingLedger(olderThanMs: number): Promise<LedgerEntry[]> {
    return this.inner.pendingLedger(olderThanMs)
  }

  ackLedger(entries: Pick<LedgerEntry, 'accountId' | 'requestId'>[]): Promise<void> {
    return this.inner.ackLedger(entries)
  }

  ackRecovered(entries: LedgerEntry[]): Promise<void> {
    return this.inner.ackRecovered(entries)
  }

  /** The account as Redis has it, this process's leases of it seen through (lease-view.ts). */
  async snapshot(accountId: string): Promise<AccountSnapshot> {
    const mine = () =>
      [...this.leases.values()].filter((lease) => lease.input.accountId === accountId)
    for (let attempt = 0; ; attempt++) {
      // A round in flight carries charges Redis may or may not have taken yet: read once it answered,
      // and again when one began during the read.
      await Promise.all(mine().map((lease) => lease.round))
      const rounds = this.rounds
      const snapshot = await this.inner.snapshot(accountId)
      if (rounds === this.rounds || attempt === 3) return seeThroughLeases(snapshot, mine())
    }
  }

  ping(): Promise<void> {
    return this.inner.ping()
  }

  /** Sends every charge and gives every lease back, then closes the Redis store. */
  async close(): Promise<void> {
    clearInterval(this.timer)
    for (const lease of this.leases.values()) lease.closing = true
    for (const lease of this.leases.values()) {
      await lease.round
      await this.tick(lease)
      // Charges Redis did not take by now never reach it: their requests are recorded as not charged.
      for (const charge of lease.charges.splice(0)) charge.done(false)
    }
    await this.inner.close()
  }

  private leaseFor(input: AdmitInput): Lease {
    const name = `${input.accountId}|${input.keyId}|${input.guardrail?.id ?? ''}`
    let lease = this.leases.get(name)
    if (!lease) {
      lease = new Lease(name, this.newId(), input)
      this.leases.set(name, lease)
    }
    return lease
  }

  private newId(): string {
    return `${LEASE_PREFIX}${this.processId}:${++this.generation}`
  }

  private tickAll(): void {
    const now = Date.now()
    for (const lease of this.leases.values()) {
      // A key without a lease in Redis has nothing to send or renew (its admissions start its rounds):
      // it is only forgotten once idle.
      const held = lease.inRedis || lease.closing || lease.charges.length > 0
      if (held || lease.round) void this.tick(lease)
      else if (lease.openCount === 0 && now - lease.lastUsedMs > IDLE_MS)
        this.leases.delete(lease.name)
    }
  }

  /**
   * One round for a lease: its charges, then either giving back what it does not use (closing or idle)
   * or growing it to recent use. One round at a time per lease; failures leave the charges to the next.
   */
  private tick(lease: Lease): Promise<void> {
    if (!lease.round) {
      this.rounds += 1
      lease.round = this.round(lease).finally(() => {
        lease.round = undefined
      })
    }
    return lease.round
  }

  private async round(lease: Lease): Promise<void> {
    try {
      await this.calls.sendCharges(lease, lease.charges.splice(0))
      const now = Date.now()
      lease.expire(now)
      if (!lease.closing && now - lease.lastUsedMs > IDLE_MS) {
        if (lease.inRedis) lease.closing = true
        else if (lease.openCount === 0 && lease.charges.length === 0) {
          this.leases.delete(lease.name)
          return
        }
      }
      if (!lease.closing) return await this.calls.grow(lease, now)
      // A closing lease is shrunk when a request in it ended (or to keep its deadline ahead).
      const unchanged =
        lease.amountNano === lease.openNano &&
        lease.slots === lease.openCount &&
        lease.requests === 0 &&
        lease.tokens <= 0
      if (!unchanged || now - lease.renewedMs > this.options.ttlMs / 4) {
        if (await this.calls.shrink(lease, now)) this.leases.delete(lease.name)
      } else if (lease.openCount === 0) this.leases.delete(lease.name)
    } catch (error) {
      log.warn('admission lease round failed; it is tried again', { error })
    }
  }

  /** The lease is gone from Redis: its open requests are charged outside it, and a new lease starts. */
  private forget(lease: Lease): void {
    for (const open of this.open.values()) if (open.lease === lease) open.backed = false
    for (const charge of lease.charges) if (charge.leaseId === lease.id) charge.leaseId = EXPIRED
    lease.reset(this.newId())
  }
}
