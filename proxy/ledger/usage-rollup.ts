/**
 * The hourly usage rollup (`usage_hourly`), which the dashboard's usage and activity pages read instead
 * of the request log. The record writer calls it in the same transaction as the request-log insert, with
 * only the rows that insert actually added: a retried batch (its rows already in Postgres) adds nothing,
 * and a batch that fails rolls back its rows and its counts together.
 */
import type { TransactionSql } from 'postgres'
import type { RequestLogRow } from './rows.ts'

const HOUR_MS = 3_600_000

/** The model a row counts under: the one that served, else the one asked for, else ''. */
export function rollupModel(row: Pick<RequestLogRow, 'servedModel' | 'model'>): string {
  return row.servedModel ?? row.model ?? ''
}

/** Adds the rows to their (account, UTC hour, key, model) totals in one upsert. */
export async function rollUpUsage(tx: TransactionSql, rows: RequestLogRow[]): Promise<void> {
  if (rows.length === 0) return
  const column = <T>(pick: (row: RequestLogRow) => T) => rows.map(pick)
  // The hour is cut in UTC here (epoch milliseconds), so it never depends on the session's time zone.
  // Sorted groups keep the row-lock order the same in every writer process (no deadlocks between them).
  await tx`
    INSERT INTO usage_hourly (account_id, hour, key_id, model, requests, errors, input_tokens, output_tokens, cost_nano, charged_nano)
    SELECT account_id, to_timestamp(hour_ms / 1000), key_id, model, count(*), count(*) FILTER (WHERE status >= 400),
           sum(input_tokens), sum(output_tokens), sum(cost_nano), sum(charged_nano)
    FROM unnest(
      ${column((row) => row.accountId)}::text[], ${column((row) => Math.floor(row.startedAtMs / HOUR_MS) * HOUR_MS)}::bigint[],
      ${column((row) => row.keyId)}::text[], ${column(rollupModel)}::text[], ${column((row) => row.status)}::integer[],
      ${column((row) => row.inputTokens)}::bigint[], ${column((row) => row.outputTokens)}::bigint[],
      ${column((row) => row.costNano)}::bigint[], ${column((row) => row.chargedNano)}::bigint[]
    ) AS r(account_id, hour_ms, key_id, model, status, input_tokens, output_tokens, cost_nano, charged_nano)
    GROUP BY account_id, hour_ms, key_id, model
    ORDER BY account_id, hour_ms, key_id, model
    ON CONFLICT (account_id, hour, key_id, model) DO UPDATE SET
      requests = usage_hourly.requests + excluded.requests,
      errors = usage_hourly.errors + excluded.errors,
      input_tokens = usage_hourly.input_tokens + excluded.input_tokens,
      output_tokens = usage_hourly.output_tokens + excluded.output_tokens,
      cost_nano = usage_hourly.cost_nano + excluded.cost_nano,
      charged_nano = usage_hourly.charged_nano + excluded.charged_nano`
}
