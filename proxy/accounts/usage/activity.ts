/**
 * The account's recent requests, newest first, from the request log, and the last 24 hours by hour from
 * the rollup. The list is read through the index `request_logs (account_id, started_at DESC)`: the
 * account's entries in time order, so a page reads only its `limit` + 1 entries however long the log is.
 * Pages continue by key (the previous page's last time and request ID), not by OFFSET, which would read
 * and discard every newer entry first; `started_at <= cursor` is the index condition, the request ID
 * only breaks ties within one microsecond.
 *
 * Filters keep a page an index range: a time range narrows the same index; a key reads
 * `(key_id, started_at)`; a model reads `(account_id, <model>, started_at)` with the rollup's model
 * expression; errors read the partial index of rows with status 400 or above (its predicate is written
 * out in the query so the planner can use it). Only `ok` reads the account's index with a filter, and
 * most requests are ok.
 */
import type { Sql } from 'postgres'
import { nanoToUsd } from '../../../shared/money.ts'
import type {
  Activity,
  ActivityQuery,
  ActivitySummary,
} from '../../../shared/schemas/admin/usage.ts'
import { decodeCursor, encodeCursor, parseLimit, parseRange } from './keyset.ts'
import { sumTotals, toTotals, TOTALS_COLUMNS, type TotalsRow } from './totals.ts'

const HOUR_MS = 3_600_000
export const DEFAULT_ACTIVITY_LIMIT = 50
export const MAX_ACTIVITY_LIMIT = 200

type Row = {
  request_id: string
  started_at: Date
  started_us: number
  key_id: string
  api_style: string
  model: string | null
  served_model: string | null
  provider: string | null
  stream: boolean
  status: number
  error_code: string | null
  input_tokens: number
  output_tokens: number
  cost_nano: number
  charged_nano: number
  latency_ms: number
  guardrail_redactions: string | null
}

export async function readActivity(
  sql: Sql,
  accountId: string,
  options: ActivityQuery,
): Promise<Activity> {
  const limit = parseLimit(options.limit, DEFAULT_ACTIVITY_LIMIT, MAX_ACTIVITY_LIMIT)
  const cursor = options.before === undefined ? undefined : decodeCursor(options.before)
  const { from, to } = parseRange(options)
  const at = cursor
    ? sql`'epoch'::timestamptz + ${cursor.atUs}::bigint * interval '1 microsecond'`
    : undefined
  const rows = await sql<Row[]>`
    SELECT request_id, started_at, (extract(epoch FROM started_at) * 1000000)::bigint AS started_us, key_id, api_style,
           model, served_model, provider, stream, status, error_code, input_tokens, output_tokens, cost_nano, charged_nano, latency_ms,
           guardrail_redactions
    FROM request_logs
    WHERE account_id = ${accountId}
      ${options.keyId === undefined ? sql`` : sql`AND key_id = ${options.keyId}`}
      ${options.model === undefined ? sql`` : sql`AND coalesce(served_model, model, '') = ${options.model}`}
      ${statusCondition(sql, options.status)}
      ${from ? sql`AND started_at >= ${from}` : sql``}
      ${to ? sql`AND started_at < ${to}` : sql``}
      ${cursor ? sql`AND started_at <= ${at!} AND (started_at < ${at!} OR request_id < ${cursor.tie})` : sql``}
    ORDER BY started_at DESC, request_id DESC
    LIMIT ${limit + 1}`
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  return {
    items: page.map((row) => ({
      requestId: row.request_id,
      time: row.started_at.toISOString(),
      keyId: row.key_id,
      apiStyle: row.api_style,
      model: row.model,
      servedModel: row.served_model,
      provider: row.provider,
      stream: row.stream,
      status: row.status,
      errorCode: row.error_code,
      inputTokens: row.input_tokens,
      outputTokens: row.output_tokens,
      costNano: row.cost_nano,
      costUsd: nanoToUsd(row.cost_nano),
      chargedNano: row.charged_nano,
      chargedUsd: nanoToUsd(row.charged_nano),
      latencyMs: row.latency_ms,
      guardrailRedactions: row.guardrail_redactions,
    })),
    nextBefore:
      rows.length > limit && last
        ? encodeCursor({ atUs: last.started_us, tie: last.request_id })
        : null,
  }
}

/** The last 24 hours (the current one included), hour by hour with zeros, from the rollup. */
export async function readActivitySummary(
  sql: Sql,
  accountId: string,
  nowMs: number,
): Promise<ActivitySummary> {
  const lastHourMs = Math.floor(nowMs / HOUR_MS) * HOUR_MS
  const firstHourMs = lastHourMs - 23 * HOUR_MS
  const rows = await sql<(TotalsRow & { start: Date })[]>`
    SELECT h AS start, ${sql.unsafe(TOTALS_COLUMNS)}
    FROM generate_series(${new Date(firstHourMs)}::timestamptz, ${new Date(lastHourMs)}::timestamptz, interval '1 hour') AS h
    LEFT JOIN usage_hourly ON account_id = ${accountId} AND hour = h
    GROUP BY h
    ORDER BY h`
  return {
    from: new Date(firstHourMs).toISOString(),
    to: new Date(nowMs).toISOString(),
    hours: rows.map((row) => ({ start: row.start.toISOString(), ...toTotals(row) })),
    totals: sumTotals(rows),
  }
}

/** `status >= 400` is written literally for errors, so the partial index of errors matches the query. */
function statusCondition(sql: Sql, status: string | undefined) {
  if (status === undefined) return sql``
  if (status === 'ok') return sql`AND status < 400`
  if (status === 'error') return sql`AND status >= 400`
  const code = Number(status)
  return code >= 400
    ? sql`AND status >= 400 AND status = ${code}`
    : sql`AND status < 400 AND status = ${code}`
}
