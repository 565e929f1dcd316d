/**
 * One admission lease as this process holds it: an open hold in Redis (lua/lease.lua) that took money,
 * concurrency slots, requests and tokens for one account, key and guardrail, and what of it the
 * requests admitted here use. The store (leased-store.ts) decides when a lease grows or is given back;
 * lease-calls.ts makes those calls to Redis.
 */
import { limitArguments } from './scripts.ts'
import type { AdmitInput } from './store.ts'
import { BUCKET_MS } from './windows.ts'

/** A lease with no admission for this long is given back. */
export const IDLE_MS = 1_000
/** Requests a lease aims to hold room for, at least. */
export const MIN_REQUESTS = 16
/**
 * A key's first lease is taken only once it has had this many admissions without a second's pause: a key
 * used now and then is decided in Redis request by request (a lease would add a call to take it and one
 * to give it back, and a round every interval, to every request).
 */
export const LEASE_AFTER_REQUESTS = 4
export const LEASE_PREFIX = 'lease:'
/** The lease id of charges whose lease expired: no hold has it. */
export const EXPIRED = `${LEASE_PREFIX}expired`

export type Charge = {
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

export class Lease {
  /** The lease's own id in Redis; a new one after the previous expired. */
  id: string
  /** The lease's amount in Redis once every charge taken here is applied. */
  amountNano = 0
  slots = 0
  /** Requests and tokens granted and not yet used. */
  requests = 0
  tokens = 0
  /**
   * Under a rate limit, requests and tokens are used only within the two-second bucket Redis counted
   * them in: until this local time (the bucket's end, measured from when the growth was sent).
   */
  usableUntilMs = Number.POSITIVE_INFINITY
  /** The bucket (Redis's clock) of the requests and tokens in hand; -1 before the first growth. */
  grantBucket = -1
  /** Requests and tokens of `grantBucket` given up when it ended, not yet taken back in Redis. */
  expiredRequests = 0
  expiredTokens = 0
  /** Advances whenever requests and tokens in hand are given up: a request admitted before returns no tokens to the lease. */
  epoch = 0
  /** Its grant's bucket ended and no growth has answered since. */
  renewing = false
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

  fits(input: AdmitInput, nowMs: number): boolean {
    return (
      this.granted &&
      !this.closing &&
      nowMs < this.usableUntilMs &&
      // Below zero, the account's holds (this lease's among them) are more than its balance: an
      // adjustment took money the lease was granted against, so its room is no longer there.
      this.sharedNano >= 0 &&
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

  /** An admission here: the lease's sizing takes note of it, whether it fits or not. */
  noteDemand(input: AdmitInput, nowMs: number): void {
    this.input = input
    this.demand += 1
    this.lastUsedMs = nowMs
    this.largestHoldNano = Math.max(this.largestHoldNano, input.holdNano)
    this.largestTokens = Math.max(this.largestTokens, input.tokens)
  }

  /** Admits a request that fits: its hold, a slot, a request and its tokens come out of the lease. */
  take(input: AdmitInput): void {
    this.openNano += input.holdNano
    this.openCount += 1
    this.peakOpen = Math.max(this.peakOpen, this.openCount)
    this.requests -= 1
    this.tokens -= input.tokens
  }

  /**
   * A request in the lease ended: its hold and slot return, less what it was charged; unused tokens
   * return while the requests and tokens it was admitted from (its `epoch`) are still in hand.
   */
  end(holdNano: number, chargedNano: number, unusedTokens: number, epoch: number): void {
    this.openNano -= holdNano
    this.openCount -= 1
    this.amountNano -= chargedNano
    if (epoch === this.epoch) this.tokens += unusedTokens
  }

  /** Whether an admission should wait for the lease's next growth: its grant's bucket ended. */
  awaitsGrowth(nowMs: number): boolean {
    return this.granted && !this.closing && (this.renewing || nowMs >= this.usableUntilMs)
  }

  /** Requests and tokens in hand whose bucket ended are given up, to be taken back in Redis. */
  expire(nowMs: number): void {
    if (nowMs < this.usableUntilMs) return
    this.renewing = true
    this.expiredRequests += this.requests
    this.expiredTokens += Math.max(0, this.tokens)
    this.giveUpInHand()
    this.usableUntilMs = Number.POSITIVE_INFINITY
  }

  /** Requests and tokens in hand are given up; requests admitted before return no tokens after. */
  private giveUpInHand(): void {
    this.requests = 0
    this.tokens = 0
    this.epoch += 1
  }

  /**
   * A growth was granted at `redisNowMs` (Redis's clock), sent at `sentMs` (this process's). Requests
   * and tokens in hand from an earlier bucket are given up (Redis counts the new grant apart from them;
   * they stay counted in theirs). Under a rate limit the grant is usable until its bucket ends: the
   * bucket's remaining time counted from the send, which is no later than its end whatever the clocks'
   * skew.
   */
  grow(
    add: { requests: number; tokens: number; amount: number; slots: number },
    redisNowMs: number,
    sentMs: number,
    rateLimited: boolean,
  ): void {
    const bucket = Math.floor(redisNowMs / BUCKET_MS)
    if (bucket !== this.grantBucket) this.giveUpInHand()
    this.grantBucket = bucket
    this.usableUntilMs = rateLimited
      ? sentMs + (bucket + 1) * BUCKET_MS - redisNowMs
      : Number.POSITIVE_INFINITY
    this.granted = true
    this.amountNano += add.amount
    this.requests += add.requests
    this.tokens += add.tokens
    this.slots += add.slots
  }

  /** The lease is gone from Redis: it starts again, empty, under a new id. */
  reset(id: string): void {
    Object.assign(this, {
      id,
      amountNano: 0,
      slots: 0,
      requests: 0,
      tokens: 0,
      openNano: 0,
      openCount: 0,
      usableUntilMs: Number.POSITIVE_INFINITY,
      grantBucket: -1,
      expiredRequests: 0,
      expiredTokens: 0,
      epoch: this.epoch + 1,
      renewing: false,
      granted: false,
      inRedis: false,
      closing: false,
    })
  }
}

/** Whether requests or tokens per minute limit the key or the account. */
export function rateLimited(input: AdmitInput): boolean {
  const { keyLimits: key, accountLimits: account } = input
  return key.rpm > 0 || key.tpm > 0 || account.rpm > 0 || account.tpm > 0
}

/** The limits a lease's growth is decided under: the key's, the account's and the guardrail's budget. */
export function limitsOf(input: AdmitInput): string {
  return [
    ...limitArguments(input.keyLimits, input.accountLimits),
    input.guardrail?.budgetNano ?? 0,
  ].join(',')
}
