/**
 * Work beside the hot path, on a timer: expire holds past their deadline (every hold ends exactly once),
 * keep running requests' holds alive, write to Postgres the outbox entries a stopped process left behind,
 * apply recent credits the live balance may have missed (a store that was unreachable when the credit
 * was recorded), and purge stored responses past their retention. Each step is idempotent, so several
 * processes can run it.
 */
import type { Sql } from 'postgres'
import type { AdmissionStore, LedgerEntry } from '../stores/admission/store.ts'
import type { Inflight } from '../pipeline/inflight.ts'
import { endExpiredImageRequests } from '../stores/image-requests.ts'
import { insertLedger, insertRequestLogs } from '../stores/ledger/record-writer.ts'
import type { LedgerRow, RequestLogRow } from '../stores/ledger/rows.ts'
import { log } from '../core/log.ts'
import type { ResponseStore } from '../stores/stored-responses.ts'

/**
 * An outbox entry older than this was not written by the process that settled it (which writes within
 * LEDGER_FLUSH_MS while Postgres answers). Writing one that process still has queued does no harm: both
 * writes are idempotent.
 */
const ORPHAN_AFTER_MS = 10_000

export type MaintenanceDeps = {
  sql: Sql
  store: AdmissionStore
  inflight: Inflight
  responses?: ResponseStore
}

export async function runMaintenance(deps: MaintenanceDeps): Promise<void> {
  const steps: [string, () => Promise<unknown>][] = [
    ['extend holds', () => deps.inflight.extendOld(deps.store)],
    ['sweep holds', () => sweepHolds(deps.sql, deps.store)],
    ['recover outbox', () => recoverOutbox(deps.sql, deps.store)],
    ['reconcile credits', () => reconcileCredits(deps.sql, deps.store)],
    ['purge stored responses', async () => deps.responses?.purgeExpired()],
  ]
  for (const [name, step] of steps) {
    try {
      await step()
    } catch (error) {
      log.warn(`maintenance step failed: ${name}`, { error })
    }
  }
}

export function startMaintenance(deps: MaintenanceDeps, intervalMs: number): () => void {
  let running = false
  const timer = setInterval(async () => {
    if (running) return
    running = true
    await runMaintenance(deps).finally(() => (running = false))
  }, intervalMs)
  return () => clearInterval(timer)
}

/** Expired holds end; image requests whose holds expired (outcome never known) become released. */
async function sweepHolds(sql: Sql, store: AdmissionStore): Promise<void> {
  const { expired } = await store.sweep()
  for (const hold of expired) log.warn('hold expired without settlement', hold)
  await endExpiredImageRequests(
    sql,
    expired.map((hold) => hold.requestId),
  )
}

export async function recoverOutbox(
  sql: Sql,
  store: AdmissionStore,
  olderThanMs = ORPHAN_AFTER_MS,
): Promise<number> {
  const entries = await store.pendingLedger(olderThanMs)
  if (entries.length === 0) return 0
  const recovered = entries.map((entry) => ({ entry, record: outboxRecord(entry) }))
  // The store counts limits per rotation lineage; the request's own key is the one its log row names.
  await insertLedger(
    sql,
    recovered.flatMap(({ entry, record }) => outboxRows(entry, record?.keyId ?? entry.keyId)),
  )
  await insertRequestLogs(
    sql,
    recovered.flatMap(({ record }) => (record ? [record] : [])),
  )
  await store.ackRecovered(entries)
  log.info('outbox entries recovered into the ledger', { count: entries.length })
  return entries.length
}

function outboxRows(entry: LedgerEntry, keyId: string): LedgerRow[] {
  const base = {
    accountId: entry.accountId,
    keyId,
    requestId: entry.requestId,
    atMs: entry.atMs,
  }
  const rows: LedgerRow[] = []
  if (entry.chargedNano > 0)
    rows.push({
      ...base,
      kind: 'charge',
      amountNano: -entry.chargedNano,
      writtenOffNano: 0,
      reason: null,
    })
  if (entry.writtenOffNano > 0)
    rows.push({
      ...base,
      kind: 'writeoff',
      amountNano: 0,
      writtenOffNano: entry.writtenOffNano,
      reason: 'recovered',
    })
  return rows
}

/** The request's log row kept with the charge (its charged amount the one the store decided). */
function outboxRecord(entry: LedgerEntry): RequestLogRow | undefined {
  if (!entry.record) return undefined
  try {
    return { ...(JSON.parse(entry.record) as RequestLogRow), chargedNano: entry.chargedNano }
  } catch {
    log.warn('outbox entry with an unreadable request-log row', { requestId: entry.requestId })
    return undefined
  }
}

/** How often a round reconciles the credits of the last day rather than of the last 15 minutes. */
const WIDE_RECONCILE_MS = 10 * 60_000
/** When each store last had the credits of the whole day reconciled (in this process). */
const wideReconciledAt = new WeakMap<AdmissionStore, number>()

/**
 * Applies recent credits and adjustments to the live balance, once each (the store ignores those it
 * has): one whose live credit was lost (a process stopped after Postgres recorded it, or the store did
 * not answer, for minutes or hours) reaches the balance once the store answers again. Each round looks at
 * the last 15 minutes; every ten minutes, and in a process's first round, at the last day, so a credit
 * lost during a long outage is not left out while most rounds stay one call per recent credit. A day
 * stays inside what the store remembers (applied entries for three days; the entries of the last two
 * days are marked applied when an account is loaded from Postgres), so an entry is never applied twice.
 */
async function reconcileCredits(sql: Sql, store: AdmissionStore): Promise<void> {
  const wide = Date.now() - (wideReconciledAt.get(store) ?? 0) >= WIDE_RECONCILE_MS
  const window = wide ? '1 day' : '15 minutes'
  const credits = await sql<{ account_id: string; request_id: string; amount_nano: number }[]>`
    SELECT account_id, request_id, amount_nano FROM ledger
    WHERE kind IN ('credit', 'adjustment') AND created_at > now() - ${window}::interval`
  for (const credit of credits) {
    const result = await store.credit(credit.account_id, credit.request_id, credit.amount_nano)
    if (result.status === 'applied')
      log.warn('credit applied late to the live balance', { entryId: credit.request_id })
  }
  if (wide) wideReconciledAt.set(store, Date.now())
}
