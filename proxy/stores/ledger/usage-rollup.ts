/**
 * The hourly usage rollup (`usage_hourly`), which the dashboard's usage and activity pages read instead
 * of the request log. The record writer runs it in the same statement as the request-log insert, over
 * the rows that insert returns, which are the rows it actually added: a retried batch (its rows already
 * in Postgres) adds nothing, and a failed statement adds neither rows nor counts.
 */
import type { Sql } from 'postgres'

/**
 * The upsert that adds the rows of the CTE `added` (request-log rows just inserted) to their (account,
 * UTC hour, key, model) totals. The model is the one that served, else the one asked for, else ''.
 * Sorted groups keep the row-lock order the same in every writer process (no deadlocks between them).
 */
export function rollUpAdded(sql: Sql) {
  return sql`
    INSERT INTO usage_hourly (account_id, hour, key_id, model, requests, errors, input_tokens, output_tokens, cost_nano, charged_nano)
    SELECT account_id, date_trunc('hour', started_at, 'UTC'), key_id, coalesce(served_model, model, ''), count(*),
           count(*) FILTER (WHERE status >= 400), sum(input_tokens), sum(output_tokens), sum(cost_nano), sum(charged_nano)
    FROM added
    GROUP BY 1, 2, 3, 4
    ORDER BY 1, 2, 3, 4
    ON CONFLICT (account_id, hour, key_id, model) DO UPDATE SET
      requests = usage_hourly.requests + excluded.requests,
      errors = usage_hourly.errors + excluded.errors,
      input_tokens = usage_hourly.input_tokens + excluded.input_tokens,
      output_tokens = usage_hourly.output_tokens + excluded.output_tokens,
      cost_nano = usage_hourly.cost_nano + excluded.cost_nano,
      charged_nano = usage_hourly.charged_nano + excluded.charged_nano`
}
