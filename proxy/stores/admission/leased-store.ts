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
 * in Redis.
 */
import { log } from '../../core/log.ts'
import { limitArguments, type RedisAdmissionStore } from './redis-store.ts'
import type { Reply } from './redis-replies.ts'
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

/** A lease with no admission for this long is given back. */
const IDLE_MS = 1_000
/** Charges in one call at most. */
const MAX_CHARGES = 500
/** Requests a lease aims to hold room for, at least. */
const MIN_REQUESTS = 16
/**
 * A key's first lease is taken only once it has had this many admissions without a second's pause: a key
 * used now and then is decided in Redis request by request (a lease would add a call to take it and one
 * to give it back, and a round every interval, to every request).
 */
const LEASE_AFTER_REQUESTS = 4
const LEASE_PREFIX = 'lease:'
/** The lease id of charges whose lease expired: no hold has it. */
const EXPIRED = `${LEASE_PREFIX}expired`

type Charge = {
  /** The lease that held the request; a lease that expired holds nothing any more. */
  leaseId: string
  requestId: string
  chargedNano: number
  writtenOffNano: number
  /** The request's log row (JSON), for the outbox. */
  record: string
  /** Settles `recorded` of the settle's answer: true once Redis has the charge. */
  done: (recorded: boolean) => void
}

type Open = { lease: Lease; holdNano: number; tokens: number; backed: boolean }

class Lease {
  /** The lease's own id in Redis; a new one after the previous expired. */
  id: string
  /** The lease's amount in Redis once every charge taken here is applied. */
  amountNano = 0
  slots = 0
  /** Requests and tokens granted and not yet used. */
  requests = 0
  tokens = 0
  openNano = 0
  openCount = 0
  charges: Charge[] = []
  /** Available balance of the account outside this lease, as of the last reply. */
  sharedNano = 0
  /** Local admissions may use the lease (it grew, and has not been given back since). */
  granted = false
  /** The limits its last growth was decided under (limitsOf). */
  grantedLimits = ''
  /** Redis has the lease's hold (it grew once and was not removed since). */
  inRedis = false
  /** The round in flight (tick), if any. */
  round: Promise<void> | undefined
  closing = false
  /** For sizing: admissions (here or refused here) since the last growth, their largest hold and tokens. */
  demand = 0
  largestHoldNano = 0
  largestTokens = 0
  peakOpen = 0
  lastUsedMs = Date.now()
  renewedMs = 0
  input: AdmitInput

  constructor(
    readonly name: string,
    id: string,
    input: AdmitInput,
  ) {
    this.id = id
    this.input = input
  }

  fits(input: AdmitInput): boolean {
    return (
      this.granted &&
      !this.closing &&
      input.holdNano <= this.amountNano - this.openNano &&
      this.openCount < this.slots &&
      this.requests >= 1 &&
      input.tokens <= this.tokens
    )
  }

  /** What this process may still spend: the account's balance outside the lease and the lease's room. */
  availableNano(): number {
    return this.sharedNano + this.amountNano - this.openNano
  }

  hasRoom(): boolean {
    return this.amountNano > this.openNano || this.slots > this.openCount || this.requests > 0
  }
}

/** The limits a lease's growth is decided under: the key's, the account's and the guardrail's budget. */
function limitsOf(input: AdmitInput): string {
  return [
    ...limitArguments(input.keyLimits, input.accountLimits),
    input.guardrail?.budgetNano ?? 0,
  ].join(',')
}

export class LeasedAdmissionStore implements AdmissionStore {
  readonly kind = 'redis'
  private readonly leases = new Map<string, Lease>()
  private readonly open = new Map<string, Open>()
  private readonly timer: Timer
  private generation = 0
  private readonly processId = crypto.randomUUID().slice(0, 8)

  constructor(
    readonly inner: RedisAdmissionStore,
    private readonly options: LeaseOptions,
  ) {
    this.timer = setInterval(() => this.tickAll(), options.intervalMs)
    this.timer.unref?.()
  }

  async admit(input: AdmitInput): Promise<AdmitResult> {
    if ((input.freePerDay ?? -1) >= 0 || input.holdDeadlineMs !== undefined)
      return this.inner.admit(input)
    const lease = this.leaseFor(input)
    lease.input = input
    lease.demand += 1
    lease.lastUsedMs = Date.now()
    lease.largestHoldNano = Math.max(lease.largestHoldNano, input.holdNano)
    lease.largestTokens = Math.max(lease.largestTokens, input.tokens)
    // The limits changed since the lease grew (an operator lowered a cap, say): what it holds was granted
    // under the old ones, so it is given back first and the request is decided in Redis under the new ones.
    if (lease.granted && lease.grantedLimits !== limitsOf(input)) {
      lease.closing = true
      await lease.round
      await this.tick(lease)
    }
    if (lease.fits(input)) {
      lease.openNano += input.holdNano
      lease.openCount += 1
      lease.peakOpen = Math.max(lease.peakOpen, lease.openCount)
      lease.requests -= 1
      lease.tokens -= input.tokens
      this.open.set(input.requestId, {
        lease,
        holdNano: input.holdNano,
        tokens: input.tokens,
        backed: true,
      })
      return { ok: true, availableNano: lease.availableNano(), nowMs: Date.now() }
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
    if (open.backed) {
      lease.openNano -= open.holdNano
      lease.openCount -= 1
      lease.amountNano -= chargedNano
      lease.tokens += open.tokens - input.tokens
    }
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
    if (open.backed) {
      lease.openNano -= open.holdNano
      lease.openCount -= 1
      lease.tokens += open.tokens
    }
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

  snapshot(accountId: string): Promise<AccountSnapshot> {
    return this.inner.snapshot(accountId)
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
    lease.round ??= this.round(lease).finally(() => {
      lease.round = undefined
    })
    return lease.round
  }

  private async round(lease: Lease): Promise<void> {
    try {
      await this.sendCharges(lease, lease.charges.splice(0))
      const now = Date.now()
      if (!lease.closing && now - lease.lastUsedMs > IDLE_MS) {
        if (lease.inRedis) lease.closing = true
        else if (lease.openCount === 0 && lease.charges.length === 0) {
          this.leases.delete(lease.name)
          return
        }
      }
      if (!lease.closing) return await this.grow(lease, now)
      // A closing lease is shrunk when a request in it ended (or to keep its deadline ahead).
      const unchanged =
        lease.amountNano === lease.openNano &&
        lease.slots === lease.openCount &&
        lease.requests === 0 &&
        lease.tokens <= 0
      if (!unchanged || now - lease.renewedMs > this.options.ttlMs / 4)
        await this.shrink(lease, now)
      else if (lease.openCount === 0) this.leases.delete(lease.name)
    } catch (error) {
      log.warn('admission lease round failed; it is tried again', { error })
    }
  }

  /** Sends charges, per lease that held them, in calls of at most MAX_CHARGES. */
  private async sendCharges(lease: Lease, charges: Charge[]): Promise<void> {
    const { accountId, keyId, guardrail } = lease.input
    const sent = new Set<Charge>()
    const unsentOf = (all: Charge[]) => all.filter((charge) => !sent.has(charge))
    for (const leaseId of new Set(charges.map((charge) => charge.leaseId))) {
      const held = charges.filter((charge) => charge.leaseId === leaseId)
      for (let start = 0; start < held.length; start += MAX_CHARGES) {
        const part = held.slice(start, start + MAX_CHARGES)
        let reply: Reply
        try {
          reply = await this.inner.decide(accountId, [
            'charge',
            leaseId,
            keyId,
            guardrail?.id ?? '',
            part.length,
            ...part.flatMap((charge) => [
              charge.requestId,
              charge.chargedNano,
              charge.writtenOffNano,
              charge.record,
            ]),
          ])
        } catch (error) {
          lease.charges.push(...unsentOf(charges))
          throw error
        }
        if (reply[0] === 'cold') {
          // The store lost the account (Redis restarted), and the lease with it. These charges are in
          // neither Redis nor Postgres yet (their ledger rows wait for them): they go once it is loaded.
          this.forget(lease)
          const waiting = unsentOf(charges)
          for (const charge of waiting) charge.leaseId = EXPIRED
          lease.charges.push(...waiting)
          return
        }
        for (const charge of part) {
          sent.add(charge)
          charge.done(true)
        }
        if (leaseId === lease.id) lease.sharedNano = Number(reply[1])
      }
    }
  }

  private async grow(lease: Lease, now: number): Promise<void> {
    const input = lease.input
    const target = Math.max(MIN_REQUESTS, 2 * lease.demand)
    const room = lease.amountNano - lease.openNano
    const freeSlots = lease.slots - lease.openCount
    const slotTarget = Math.max(MIN_REQUESTS, 2 * lease.peakOpen)
    // Grows when any part has less than half the room recent use asks for; then tops every part up.
    const short =
      lease.requests < target / 2 ||
      room < (target / 2) * lease.largestHoldNano ||
      lease.tokens < (target / 2) * lease.largestTokens ||
      freeSlots < slotTarget / 2
    const add = {
      requests: Math.max(0, target - lease.requests),
      amount: Math.max(0, target * lease.largestHoldNano - room),
      tokens: Math.max(0, target * lease.largestTokens - lease.tokens),
      slots: Math.max(0, slotTarget - freeSlots),
    }
    const wanted = lease.demand >= (lease.inRedis ? 1 : LEASE_AFTER_REQUESTS) && short
    const renew = lease.inRedis && now - lease.renewedMs > this.options.ttlMs / 4
    if (!wanted && !renew) return
    if (!wanted) Object.assign(add, { requests: 0, amount: 0, tokens: 0, slots: 0 })
    const reply = await this.inner.decide(input.accountId, [
      'grow',
      lease.id,
      input.keyId,
      input.guardrail?.id ?? '',
      this.options.ttlMs,
      add.amount,
      add.requests,
      add.tokens,
      add.slots,
      ...limitArguments(input.keyLimits, input.accountLimits),
      input.guardrail?.budgetNano ?? 0,
      lease.inRedis ? 1 : 0,
    ])
    if (reply[0] === 'cold') return this.forget(lease)
    const [, granted, availableNano, , existed] = reply.map(Number) as number[]
    if (lease.inRedis && existed === 0) {
      log.warn('an admission lease expired while its process ran; a new one is taken', {
        accountId: input.accountId,
      })
      return this.forget(lease)
    }
    lease.renewedMs = now
    lease.demand = 0
    lease.peakOpen = lease.openCount
    if (granted === 1) {
      lease.granted = true
      lease.grantedLimits = limitsOf(input)
      lease.inRedis = true
      lease.amountNano += add.amount
      lease.requests += add.requests
      lease.tokens += add.tokens
      lease.slots += add.slots
    }
    lease.sharedNano = availableNano!
  }

  /** Gives back what the lease holds beyond its open requests; a lease with none left is removed. */
  private async shrink(lease: Lease, now: number): Promise<void> {
    const keep = { amount: lease.openNano, slots: lease.openCount }
    const unused = { requests: lease.requests, tokens: Math.max(0, lease.tokens) }
    lease.amountNano = keep.amount
    lease.slots = keep.slots
    lease.requests = 0
    lease.tokens = 0
    const reply = await this.inner.decide(lease.input.accountId, [
      'shrink',
      lease.id,
      keep.amount,
      keep.slots,
      unused.requests,
      unused.tokens,
      this.options.ttlMs,
    ])
    if (reply[0] === 'cold') return this.forget(lease)
    lease.sharedNano = Number(reply[1])
    lease.renewedMs = now
    lease.granted = false
    lease.closing = false
    lease.inRedis = keep.amount > 0 || keep.slots > 0
    // Requests still open keep their part until they end; the lease may grow again meanwhile.
    if (!lease.inRedis && lease.charges.length === 0) this.leases.delete(lease.name)
  }

  /** The lease is gone from Redis: its open requests are charged outside it, and a new lease starts. */
  private forget(lease: Lease): void {
    for (const open of this.open.values()) if (open.lease === lease) open.backed = false
    for (const charge of lease.charges) if (charge.leaseId === lease.id) charge.leaseId = EXPIRED
    lease.id = this.newId()
    Object.assign(lease, {
      amountNano: 0,
      slots: 0,
      requests: 0,
      tokens: 0,
      openNano: 0,
      openCount: 0,
      granted: false,
      inRedis: false,
      closing: false,
    })
  }
}
