/**
 * An account's usage over a period, by hour or UTC day, optionally by model or key: read from the hourly
 * rollup (`usage_hourly`, one row per account, hour, key and model), never from the request log. The
 * rollup's primary key starts with (account_id, hour), so a period is one index range.
 */
import type { Sql } from 'postgres'
import { ServiceError } from '../../../shared/errors.ts'
import type { Granularity, Usage, UsageGroup } from '../../../shared/schemas/admin/usage.ts'
import { parseTime } from './keyset.ts'
import { sumTotals, toTotals, TOTALS_COLUMNS, type TotalsRow } from './totals.ts'

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS
/** Longest period per granularity: a month of hours, a little over a year of days. */
const MAX_SPAN_MS: Record<Granularity, number> = { hour: 31 * DAY_MS, day: 400 * DAY_MS }
const DEFAULT_SPAN_MS: Record<Granularity, number> = { hour: DAY_MS, day: 30 * DAY_MS }

export type UsageRequest = {
  from?: string
  to?: string
  granularity?: Granularity
  groupBy?: UsageGroup
}

type Row = TotalsRow & { start: Date; grp: string }

export async function readUsage(
  sql: Sql,
  accountId: string,
  request: UsageRequest,
  nowMs: number,
): Promise<Usage> {
  const granularity = request.granularity ?? 'day'
  const toMs = request.to === undefined ? nowMs : parseTime(request.to, 'to')
  const unit = granularity === 'hour' ? HOUR_MS : DAY_MS
  const fromMs =
    Math.floor(
      (request.from === undefined
        ? toMs - DEFAULT_SPAN_MS[granularity]
        : parseTime(request.from, 'from')) / unit,
    ) * unit
  if (fromMs >= toMs)
    throw new ServiceError('invalid_request', 'from: must be before to.', { param: 'from' })
  if (toMs - fromMs > MAX_SPAN_MS[granularity]) {
    const days = MAX_SPAN_MS[granularity] / DAY_MS
    throw new ServiceError(
      'invalid_request',
      `from: the period may span at most ${days} days with granularity=${granularity}.`,
      { param: 'from' },
    )
  }
  const bucket = granularity === 'hour' ? sql`hour` : sql`date_trunc('day', hour, 'UTC')`
  const group =
    request.groupBy === 'model' ? sql`model` : request.groupBy === 'key' ? sql`key_id` : sql`''`
  const rows = await sql<Row[]>`
    SELECT ${bucket} AS start, ${group} AS grp, ${sql.unsafe(TOTALS_COLUMNS)}
    FROM usage_hourly
    WHERE account_id = ${accountId} AND hour >= ${new Date(fromMs)} AND hour < ${new Date(toMs)}
    GROUP BY 1, 2
    ORDER BY 1, 2`
  const keys =
    request.groupBy === 'key'
      ? await keyNames(sql, accountId, [...new Set(rows.map((row) => row.grp))])
      : undefined
  return {
    from: new Date(fromMs).toISOString(),
    to: new Date(toMs).toISOString(),
    granularity,
    groupBy: request.groupBy ?? null,
    buckets: rows.map((row) => ({
      start: row.start.toISOString(),
      ...(request.groupBy === 'model' ? { model: row.grp } : {}),
      ...(keys ? { key: keys.get(row.grp) ?? { id: row.grp, name: '', prefix: '' } } : {}),
      ...toTotals(row),
    })),
    totals: sumTotals(rows),
  }
}

async function keyNames(sql: Sql, accountId: string, ids: string[]) {
  const rows = await sql<{ id: string; name: string; prefix: string }[]>`
    SELECT id, name, prefix FROM api_keys WHERE account_id = ${accountId} AND id = ANY(${ids}::text[])`
  return new Map(rows.map((row) => [row.id, row]))
}
