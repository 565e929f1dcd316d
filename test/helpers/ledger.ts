/** Reading what the gateway wrote, for money assertions. */
import type { TestGateway } from './gateway.ts'

export type LedgerRowView = {
  request_id: string
  kind: string
  amount_nano: number
  written_off_nano: number
  reason: string | null
}

/** Waits until queued rows are in Postgres, then returns the account's ledger. */
export async function ledgerOf(gw: TestGateway, accountId: string): Promise<LedgerRowView[]> {
  await gw.app.gateway.writer.drain()
  return gw.app.gateway.sql<LedgerRowView[]>`
    SELECT request_id, kind, amount_nano, written_off_nano, reason FROM ledger WHERE account_id = ${accountId} ORDER BY id`
}

export const sumOf = (rows: LedgerRowView[]) => rows.reduce((sum, row) => sum + row.amount_nano, 0)

/** Waits for every hold of the account to end (settles run after the response). */
export async function holdsEnded(gw: TestGateway, accountId: string, timeoutMs = 5_000) {
  const until = Date.now() + timeoutMs
  for (;;) {
    const snapshot = await gw.app.gateway.store.snapshot(accountId)
    // Charges a lease took reach the ledger only once Redis has them: wait for those too.
    const ended = snapshot.inFlight === 0 && snapshot.heldNano === 0 && !snapshot.unsentCharges
    if (ended || Date.now() > until) return snapshot
    await Bun.sleep(20)
  }
}

/**
 * Waits until every hold of the account has ended and Postgres has caught up with the live balance
 * (ledger rows follow their settlement by a few moments), then returns both for assertions.
 */
export async function settledAccount(gw: TestGateway, accountId: string, timeoutMs = 5_000) {
  const until = Date.now() + timeoutMs
  for (;;) {
    const snapshot = await holdsEnded(gw, accountId, timeoutMs)
    const ledger = await ledgerOf(gw, accountId)
    if (snapshot.balanceNano === sumOf(ledger) || Date.now() > until) {
      // A flush may have written the ledger rows just after the drain above, and be writing the
      // request-log rows queued with them still: those are in Postgres too once it returns.
      await gw.app.gateway.writer.drain()
      return { snapshot, ledger }
    }
    await Bun.sleep(20)
  }
}
