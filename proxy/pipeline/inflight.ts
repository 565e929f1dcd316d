/**
 * The holds this process has open, so that long-running requests (streams) can keep their holds from
 * expiring: holds not extended for a quarter of the hold deadline get a new deadline. At shutdown the same
 * list tells when every hold has ended, and cuts the streams still running past the drain deadline.
 */
import { HOLD_DEADLINE_MS, type AdmissionStore } from '../stores/admission/store.ts'
import { log } from '../core/log.ts'

type Open = { accountId: string; extendedAtMs: number; cut?: () => void }

export class Inflight {
  private readonly open = new Map<string, Open>()
  private waiters: (() => void)[] = []
  private readonly endWaiters = new Map<string, (() => void)[]>()
  private readonly extendAfterMs: number

  /** `holdDeadlineMs`: the admission store's; holds are extended after a quarter of it. */
  constructor(holdDeadlineMs = HOLD_DEADLINE_MS) {
    this.extendAfterMs = Math.floor(holdDeadlineMs / 4)
  }

  add(requestId: string, accountId: string): void {
    this.open.set(requestId, { accountId, extendedAtMs: Date.now() })
  }

  /** How to stop the request early (a stream: abort its upstream, so the relay ends it and settles what was delivered). */
  setCut(requestId: string, cut: () => void): void {
    const entry = this.open.get(requestId)
    if (entry) entry.cut = cut
  }

  delete(requestId: string): void {
    this.open.delete(requestId)
    const ended = this.endWaiters.get(requestId)
    if (ended) {
      this.endWaiters.delete(requestId)
      for (const wake of ended) wake()
    }
    if (this.open.size > 0) return
    const waiters = this.waiters
    this.waiters = []
    for (const wake of waiters) wake()
  }

  /** Resolves once the request's hold has ended (at once when it has none open in this process). */
  ended(requestId: string): Promise<void> {
    if (!this.open.has(requestId)) return Promise.resolve()
    return new Promise((resolve) =>
      this.endWaiters.set(requestId, [...(this.endWaiters.get(requestId) ?? []), resolve]),
    )
  }

  get size(): number {
    return this.open.size
  }

  /** Cuts every open request that has a cut, once each; returns how many were cut. */
  cutAll(): number {
    let count = 0
    for (const [requestId, entry] of this.open) {
      const cut = entry.cut
      if (!cut) continue
      entry.cut = undefined
      count += 1
      try {
        cut()
      } catch (error) {
        log.warn('request could not be cut', { requestId, error })
      }
    }
    return count
  }

  /** Resolves true once no hold is open, or false when `timeoutMs` passes first. */
  drained(timeoutMs: number): Promise<boolean> {
    if (this.open.size === 0) return Promise.resolve(true)
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer)
        resolve(true)
      }
      const timer = setTimeout(
        () => {
          this.waiters = this.waiters.filter((waiter) => waiter !== wake)
          resolve(this.open.size === 0)
        },
        Math.max(0, timeoutMs),
      )
      this.waiters.push(wake)
    })
  }

  /** Extends the deadline of holds not extended for a while, one store call per account. */
  async extendOld(store: AdmissionStore, nowMs = Date.now()): Promise<void> {
    const byAccount = new Map<string, string[]>()
    for (const [requestId, entry] of this.open) {
      if (nowMs - entry.extendedAtMs < this.extendAfterMs) continue
      entry.extendedAtMs = nowMs
      byAccount.set(entry.accountId, [...(byAccount.get(entry.accountId) ?? []), requestId])
    }
    for (const [accountId, requestIds] of byAccount) {
      await store
        .extend(accountId, requestIds)
        .catch((error) => log.warn('hold extension failed', { accountId, error }))
    }
  }
}
