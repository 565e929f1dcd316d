/**
 * The holds this process has open, so that long-running requests (streams) can keep their holds from
 * expiring: every minute, holds older than HOLD_EXTEND_AFTER_MS get a new deadline.
 */
import { HOLD_EXTEND_AFTER_MS, type AdmissionStore } from '../admission/store.ts'
import { log } from '../log/log.ts'

type Open = { accountId: string; extendedAtMs: number }

export class Inflight {
  private readonly open = new Map<string, Open>()

  add(requestId: string, accountId: string): void {
    this.open.set(requestId, { accountId, extendedAtMs: Date.now() })
  }

  delete(requestId: string): void {
    this.open.delete(requestId)
  }

  get size(): number {
    return this.open.size
  }

  /** Extends the deadline of holds not extended for a while, one store call per account. */
  async extendOld(store: AdmissionStore, nowMs = Date.now()): Promise<void> {
    const byAccount = new Map<string, string[]>()
    for (const [requestId, entry] of this.open) {
      if (nowMs - entry.extendedAtMs < HOLD_EXTEND_AFTER_MS) continue
      entry.extendedAtMs = nowMs
      byAccount.set(entry.accountId, [...(byAccount.get(entry.accountId) ?? []), requestId])
    }
    for (const [accountId, requestIds] of byAccount) {
      await store.extend(accountId, requestIds).catch((error) => log.warn('hold extension failed', { accountId, error }))
    }
  }
}
