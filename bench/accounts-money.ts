/**
 * The money check of `bun run bench:accounts`: once every lease and outbox entry has ended, every
 * account's live balance against its ledger, and the totals of the ledger and the request log.
 */
import type postgres from 'postgres'
import { takeReading, type Sources } from './accounts-readings.ts'
import type { AccountState, OperatorClient } from './gateway.ts'

export type Funded = { accountId: string; key: string }

/** Runs `task` for 0…count-1 with at most `concurrency` in flight; results in index order. */
export async function inParallel<T>(
  count: number,
  concurrency: number,
  task: (index: number) => Promise<T>,
  onDone?: (done: number) => void,
): Promise<T[]> {
  const results = new Array<T>(count)
  let next = 0
  let done = 0
  const worker = async () => {
    while (next < count) {
      const index = next++
      results[index] = await task(index)
      onDone?.(++done)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
  return results
}

/**
 * Polls until no lease and no outbox entry is left and the gateway has no hold open and nothing in
 * flight. Holds of single requests may stay: an admission Redis placed but did not confirm in time
 * (502 admission_unconfirmed) keeps its hold until its deadline, by design.
 */
export async function waitForSettled(
  sources: Sources,
  timeoutS: number,
): Promise<{ waitedS: number; orphanAccounts: string[] }> {
  const started = Date.now()
  for (;;) {
    const reading = await takeReading(sources, 'settling', undefined)
    const open =
      reading.redis.leases +
      (reading.redis.byKind.outbox ?? 0) +
      reading.gateway.openHolds +
      reading.gateway.inflight
    const waitedS = (Date.now() - started) / 1000
    if (open === 0 || waitedS > timeoutS)
      return { waitedS, orphanAccounts: reading.redis.accountsWithRequestHolds }
    await Bun.sleep(500)
  }
}

export type MoneyCheck = {
  accounts: number
  mismatched: { accountId: string; balanceNano: number; ledgerBalanceNano: number }[]
  negative: number
  /** Accounts with a hold or a request in flight left; of them, those with orphan holds only. */
  holdsLeft: number
  orphanHolds: number
  balanceNano: number
  ledger: {
    creditNano: number
    chargeNano: number
    writtenOffNano: number
    sumNano: number
    rows: Record<string, number>
  }
  logs: {
    rows: number
    byStatus: Record<string, number>
    byError: Record<string, number>
    chargedNano: number
    charged: number
  }
}

/** Every account through the operator API; the totals of the ledger and the request log in SQL. */
export async function checkMoney(
  operator: OperatorClient,
  funded: Funded[],
  sql: postgres.Sql,
  orphanAccounts: Set<string>,
): Promise<MoneyCheck> {
  const states = await inParallel(funded.length, 16, async (index) => {
    const { accountId } = funded[index]!
    let state: AccountState = await operator.account(accountId)
    // A charge may still be on its way to Postgres: read again for a moment before calling it a
    // mismatch.
    const attempts = orphanAccounts.has(accountId) ? 1 : 20
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (
        state.balanceNano === state.ledgerBalanceNano &&
        state.heldNano === 0 &&
        state.inFlight === 0
      )
        break
      await Bun.sleep(250)
      state = await operator.account(accountId)
    }
    return state
  })
  const [ledger] = await sql<
    { credit: number; charge: number; written_off: number; sum: number }[]
  >`SELECT coalesce(sum(amount_nano) FILTER (WHERE kind = 'credit'), 0)::bigint AS credit,
           coalesce(sum(amount_nano) FILTER (WHERE kind = 'charge'), 0)::bigint AS charge,
           coalesce(sum(written_off_nano), 0)::bigint AS written_off,
           coalesce(sum(amount_nano), 0)::bigint AS sum
    FROM ledger`
  const ledgerRows = await sql<{ kind: string; n: number }[]>`
    SELECT kind, count(*)::int AS n FROM ledger GROUP BY kind ORDER BY kind`
  const errors = await sql<{ code: string; n: number }[]>`
    SELECT error_code AS code, count(*)::int AS n FROM request_logs
    WHERE error_code IS NOT NULL GROUP BY error_code ORDER BY error_code`
  const logRows = await sql<{ status: number; n: number; charged: number; with_charge: number }[]>`
    SELECT status, count(*)::int AS n, coalesce(sum(charged_nano), 0)::bigint AS charged,
           (count(*) FILTER (WHERE charged_nano > 0))::int AS with_charge
    FROM request_logs GROUP BY status ORDER BY status`
  return {
    accounts: states.length,
    mismatched: states
      .filter((state) => state.balanceNano !== state.ledgerBalanceNano)
      .map(({ accountId, balanceNano, ledgerBalanceNano }) => ({
        accountId,
        balanceNano,
        ledgerBalanceNano,
      })),
    negative: states.filter((state) => state.balanceNano < 0).length,
    holdsLeft: states.filter((state) => state.heldNano !== 0 || state.inFlight !== 0).length,
    orphanHolds: states.filter(
      (state) =>
        (state.heldNano !== 0 || state.inFlight !== 0) && orphanAccounts.has(state.accountId),
    ).length,
    balanceNano: states.reduce((sum, state) => sum + state.balanceNano, 0),
    ledger: {
      creditNano: Number(ledger!.credit),
      chargeNano: Number(ledger!.charge),
      writtenOffNano: Number(ledger!.written_off),
      sumNano: Number(ledger!.sum),
      rows: Object.fromEntries(ledgerRows.map((row) => [row.kind, row.n])),
    },
    logs: {
      rows: logRows.reduce((sum, row) => sum + row.n, 0),
      byStatus: Object.fromEntries(logRows.map((row) => [String(row.status), row.n])),
      byError: Object.fromEntries(errors.map((row) => [row.code, row.n])),
      chargedNano: logRows.reduce((sum, row) => sum + Number(row.charged), 0),
      charged: logRows.reduce((sum, row) => sum + row.with_charge, 0),
    },
  }
}
