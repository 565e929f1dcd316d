/** Usage totals as the admin API shows them: counts, and money in nano-USD beside decimal USD. */
import { nanoToUsd } from '../../../shared/money.ts'
import type { UsageTotals } from '../../../shared/schemas/admin/usage.ts'

/** Sums of usage_hourly columns, as a query returns them. */
export type TotalsRow = {
  requests: number
  errors: number
  input_tokens: number
  output_tokens: number
  cost_nano: number
  charged_nano: number
}

/** The SELECT list that sums usage_hourly rows into a TotalsRow (zeros when there are none). */
export const TOTALS_COLUMNS = `
  coalesce(sum(requests), 0)::bigint AS requests, coalesce(sum(errors), 0)::bigint AS errors,
  coalesce(sum(input_tokens), 0)::bigint AS input_tokens, coalesce(sum(output_tokens), 0)::bigint AS output_tokens,
  coalesce(sum(cost_nano), 0)::bigint AS cost_nano, coalesce(sum(charged_nano), 0)::bigint AS charged_nano`

export function toTotals(row: TotalsRow): UsageTotals {
  return {
    requests: row.requests,
    errors: row.errors,
    inputTokens: row.input_tokens,
    outputTokens: row.output_tokens,
    costNano: row.cost_nano,
    costUsd: nanoToUsd(row.cost_nano),
    chargedNano: row.charged_nano,
    chargedUsd: nanoToUsd(row.charged_nano),
  }
}

export function sumTotals(rows: readonly TotalsRow[]): UsageTotals {
  const sum: TotalsRow = {
    requests: 0,
    errors: 0,
    input_tokens: 0,
    output_tokens: 0,
    cost_nano: 0,
    charged_nano: 0,
  }
  for (const row of rows) {
    sum.requests += row.requests
    sum.errors += row.errors
    sum.input_tokens += row.input_tokens
    sum.output_tokens += row.output_tokens
    sum.cost_nano += row.cost_nano
    sum.charged_nano += row.charged_nano
  }
  return toTotals(sum)
}
