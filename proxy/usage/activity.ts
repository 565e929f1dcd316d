/**
 * The account's recent requests, newest first, from the request log, and the last 24 hours by hour from
 * the rollup. The list is read through the index `request_logs (account_id, started_at DESC)`: the
 * account's entries in time order, so a page reads only its `limit` + 1 entries however long the log is.
 * Pages continue by key (the previous page's last time and request ID), not by OFFSET, which would read
 * and discard every newer entry first; `started_at <= cursor` is the index condition, the request ID
 * only breaks ties within one microsecond.
 */
import type { Sql } from 'postgres'
import { ServiceError } from '../../shared/errors.ts'
import { nanoToUsd } from '../../shared/money.ts'
import type { Activity, ActivitySummary } from '../../shared/schemas/admin/usage.ts'
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
}

type Cursor = { startedUs: number; requestId: string }

export async function readActivity(sql: Sql, accountId: string, options: { limit?: string; before?: string }): Promise<Activity> {
  const limit = options.limit === undefined ? DEFAULT_ACTIVITY_LIMIT : Number(options.limit)
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_ACTIVITY_LIMIT) {
    throw new ServiceError('invalid_request', `limit: must be a whole number from 1 to ${MAX_ACTIVITY_LIMIT}.`, { param: 'limit' })
  }
  const cursor = options.before === undefined ? undefined : decodeCursor(options.before)
  const at = cursor ? sql`'epoch'::timestamptz + ${cursor.startedUs}::bigint * interval '1 microsecond'` : undefined
  const rows = await sql<Row[]>`
    SELECT request_id, started_at, (extract(epoch FROM started_at) * 1000000)::bigint AS started_us, key_id, api_style,
           model, served_model, provider, stream, status, error_code, input_tokens, output_tokens, cost_nano, charged_nano, latency_ms
    FROM request_logs
    WHERE account_id = ${accountId}
      ${cursor ? sql`AND started_at <= ${at!} AND (started_at < ${at!} OR request_id < ${cursor.requestId})` : sql``}
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
    })),
    nextBefore: rows.length > limit && last ? encodeCursor({ startedUs: last.started_us, requestId: last.request_id }) : null,
  }
}

/** The last 24 hours (the current one included), hour by hour with zeros, from the rollup. */
export async function readActivitySummary(sql: Sql, accountId: string, nowMs: number): Promise<ActivitySummary> {
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

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(`${cursor.startedUs}:${cursor.requestId}`).toString('base64url')
}

function decodeCursor(text: string): Cursor {
  const match = /^(\d{1,17}):(\S{1,100})$/.exec(Buffer.from(text, 'base64url').toString())
  if (!match) throw new ServiceError('invalid_request', 'before: not a cursor from a previous page (use its nextBefore).', { param: 'before' })
  return { startedUs: Number(match[1]), requestId: match[2]! }
}
