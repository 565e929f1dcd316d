/**
 * The calls a lease makes to Redis (lua/lease.lua through the decide script): its charges, its growth to
 * recent use, and giving back what it does not use. A reply "cold" means Redis lost the account and the
 * lease with it: `forget` starts the lease again.
 */
import { log } from '../../core/log.ts'
import {
  EXPIRED,
  LEASE_AFTER_REQUESTS,
  limitsOf,
  MIN_REQUESTS,
  rateLimited,
  type Charge,
  type Lease,
} from './lease.ts'
import type { RedisAdmissionStore } from './redis-store.ts'
import { limitArguments } from './scripts.ts'
import type { Reply } from './redis-replies.ts'

/** Charges in one call at most. */
const MAX_CHARGES = 500

export class LeaseCalls {
  constructor(
    private readonly inner: RedisAdmissionStore,
    private readonly ttlMs: number,
    private readonly forget: (lease: Lease) => void,
  ) {}

  /** Sends charges, per lease that held them, in calls of at most MAX_CHARGES. */
  async sendCharges(lease: Lease, charges: Charge[]): Promise<void> {
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

  /**
   * Tops every part of the lease up to room for twice the admissions since its last growth (at least
   * MIN_REQUESTS) once any part has less than half that, or only renews its deadline.
   */
  async grow(lease: Lease, now: number): Promise<void> {
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
    const renew = lease.inRedis && now - lease.renewedMs > this.ttlMs / 4
    if (!wanted && !renew) return
    if (!wanted) Object.assign(add, { requests: 0, amount: 0, tokens: 0, slots: 0 })
    const reply = await this.inner.decide(input.accountId, [
      'grow',
      lease.id,
      input.keyId,
      input.guardrail?.id ?? '',
      this.ttlMs,
      add.amount,
      add.requests,
      add.tokens,
      add.slots,
      ...limitArguments(input.keyLimits, input.accountLimits),
      input.guardrail?.budgetNano ?? 0,
      lease.inRedis ? 1 : 0,
      ...this.takeBack(lease, 0, 0),
    ])
    if (reply[0] === 'cold') return this.forget(lease)
    const [, granted, availableNano, redisNowMs, existed, slots] = reply.map(Number) as number[]
    if (lease.inRedis && existed === 0) {
      log.warn('an admission lease expired while its process ran; a new one is taken', {
        accountId: input.accountId,
      })
      return this.forget(lease)
    }
    lease.renewedMs = now
    lease.renewing = false
    lease.demand = 0
    lease.peakOpen = lease.openCount
    if (granted === 1) {
      // Slots are granted in part under a concurrency limit: what Redis added.
      lease.grow({ ...add, slots: slots! }, redisNowMs!, now, rateLimited(input))
      lease.grantedLimits = limitsOf(input)
      lease.inRedis = true
    }
    lease.sharedNano = availableNano!
  }

  /** Gives back what the lease holds beyond its open requests; true when it holds nothing left (it can go). */
  async shrink(lease: Lease, now: number): Promise<boolean> {
    const keep = { amount: lease.openNano, slots: lease.openCount }
    const unused = this.takeBack(lease, lease.requests, Math.max(0, lease.tokens))
    lease.amountNano = keep.amount
    lease.slots = keep.slots
    lease.requests = 0
    lease.tokens = 0
    const reply = await this.inner.decide(lease.input.accountId, [
      'shrink',
      lease.id,
      keep.amount,
      keep.slots,
      ...unused,
      this.ttlMs,
    ])
    if (reply[0] === 'cold') {
      this.forget(lease)
      return false
    }
    lease.sharedNano = Number(reply[1])
    lease.renewedMs = now
    lease.granted = false
    lease.closing = false
    lease.inRedis = keep.amount > 0 || keep.slots > 0
    // Requests still open keep their part until they end; the lease may grow again meanwhile.
    return !lease.inRedis && lease.charges.length === 0
  }

  /**
   * The requests and tokens a call takes back from the bucket they were counted in: those whose bucket
   * ended, with `requests` and `tokens` more, and that bucket. Sent once: a call that fails leaves them
   * counted (stricter, never looser).
   */
  private takeBack(lease: Lease, requests: number, tokens: number): number[] {
    const back = [lease.expiredRequests + requests, lease.expiredTokens + tokens, lease.grantBucket]
    lease.expiredRequests = 0
    lease.expiredTokens = 0
    return back
  }
}
