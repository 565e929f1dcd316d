/**
 * The account's ledger as its members read it, newest first, in keyset pages (see keyset.ts). A page is
 * one range of `ledger_account_time (account_id, created_at)`, read backwards; the identity column breaks
 * ties within a microsecond. Filtering by a kind other than `charge` reads the small partial index of the
 * rare kinds instead (its predicate, `kind <> 'charge'`, is written out so the planner can use it):
 * otherwise a filter for credits would walk every charge of the account.
 */
import type { Sql } from 'postgres'
import { nanoToUsd } from '../../../shared/money.ts'
import type { Ledger, LedgerKind, LedgerQuery } from '../../../shared/schemas/admin/billing.ts'
import { decodeCursor, encodeCursor, parseLimit, parseRange } from './keyset.ts'

export const DEFAULT_LEDGER_LIMIT = 50
export const MAX_LEDGER_LIMIT = 200

type Row = {
  id: number
  created_at: Date
  created_us: number
  kind: LedgerKind
  amount_nano: number
  written_off_nano: number
  request_id: string
  key_id: string | null
  reason: string | null
}

export async function readLedger(
  sql: Sql,
  accountId: string,
  options: LedgerQuery,
): Promise<Ledger> {
  const limit = parseLimit(options.limit, DEFAULT_LEDGER_LIMIT, MAX_LEDGER_LIMIT)
  const cursor =
    options.before === undefined ? undefined : decodeCursor(options.before, /^\d{1,18}$/)
  const { from, to } = parseRange(options)
  const at = cursor
    ? sql`'epoch'::timestamptz + ${cursor.atUs}::bigint * interval '1 microsecond'`
    : undefined
  const kind =
    options.kind === undefined
      ? sql``
      : options.kind === 'charge'
        ? sql`AND kind = 'charge'`
        : sql`AND kind <> 'charge' AND kind = ${options.kind}`
  const rows = await sql<Row[]>`
    SELECT id, created_at, (extract(epoch FROM created_at) * 1000000)::bigint AS created_us, kind, amount_nano,
           written_off_nano, request_id, key_id, reason
    FROM ledger
    WHERE account_id = ${accountId}
      ${kind}
      ${from ? sql`AND created_at >= ${from}` : sql``}
      ${to ? sql`AND created_at < ${to}` : sql``}
      ${cursor ? sql`AND created_at <= ${at!} AND (created_at < ${at!} OR id < ${cursor.tie}::bigint)` : sql``}
    ORDER BY created_at DESC, id DESC
    LIMIT ${limit + 1}`
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  return {
    items: page.map((row) => ({
      id: String(row.id),
      time: row.created_at.toISOString(),
      kind: row.kind,
      amountNano: row.amount_nano,
      amountUsd: nanoToUsd(row.amount_nano),
      writtenOffNano: row.written_off_nano,
      writtenOffUsd: nanoToUsd(row.written_off_nano),
      reference: row.request_id,
      keyId: row.key_id,
      reason: row.reason,
    })),
    nextBefore:
      rows.length > limit && last
        ? encodeCursor({ atUs: last.created_us, tie: String(last.id) })
        : null,
  }
}
