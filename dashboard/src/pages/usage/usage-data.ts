/**
 * The usage page's numbers: the period's UTC days, and the rollup's buckets laid out per day, in total
 * and per model or key. Money stays integer nano-USD here (sums of integers are exact); it becomes
 * dollars only as chart coordinates and decimal USD strings for display.
 */
import { nanoToUsd } from '../../../../shared/money.ts'
import type { Usage, UsageBucket } from '../../../../shared/schemas/admin/usage.ts'

const DAY_MS = 86_400_000
/** Groups drawn on their own; the rest are summed as "Other". */
export const TOP_GROUPS = 5

export const PERIODS = [7, 30, 90] as const
export type Period = (typeof PERIODS)[number]

/** The period the address names (`?days=7`); 30 days when it names none or another. */
export function periodFrom(days: string): Period {
  return PERIODS.find((period) => String(period) === days) ?? 30
}

/** The first UTC day of a period of `days` days ending today. */
export function periodStartMs(days: number, nowMs: number): number {
  return Math.floor(nowMs / DAY_MS) * DAY_MS - (days - 1) * DAY_MS
}

/** Start of each UTC day of the period, in seconds (uPlot's time unit). */
export function periodDays(days: number, nowMs: number): number[] {
  const first = periodStartMs(days, nowMs)
  return Array.from({ length: days }, (_, index) => (first + index * DAY_MS) / 1000)
}

export type Daily = {
  chargedNano: number[]
  requests: number[]
  inputTokens: number[]
  outputTokens: number[]
}

function emptyDaily(length: number): Daily {
  return {
    chargedNano: Array(length).fill(0),
    requests: Array(length).fill(0),
    inputTokens: Array(length).fill(0),
    outputTokens: Array(length).fill(0),
  }
}

function add(daily: Daily, index: number, bucket: UsageBucket): void {
  daily.chargedNano[index]! += bucket.chargedNano
  daily.requests[index]! += bucket.requests
  daily.inputTokens[index]! += bucket.inputTokens
  daily.outputTokens[index]! += bucket.outputTokens
}

/** The buckets summed per day of the period (days without traffic are zero). */
export function perDay(usage: Usage, days: number[]): Daily {
  const index = new Map(days.map((day, position) => [day, position]))
  const daily = emptyDaily(days.length)
  for (const bucket of usage.buckets) {
    const position = index.get(Date.parse(bucket.start) / 1000)
    if (position !== undefined) add(daily, position, bucket)
  }
  return daily
}

export type Group = Daily & {
  label: string
  /** Period totals of the group. */
  totals: { chargedNano: number; requests: number; inputTokens: number; outputTokens: number }
  other: boolean
}

/** The buckets per day and per group (model or key), the biggest spenders first, the rest as "Other". */
export function perGroup(
  usage: Usage,
  days: number[],
  name: (bucket: UsageBucket) => string,
): Group[] {
  const index = new Map(days.map((day, position) => [day, position]))
  const groups = new Map<string, Daily>()
  for (const bucket of usage.buckets) {
    const position = index.get(Date.parse(bucket.start) / 1000)
    if (position === undefined) continue
    const label = name(bucket)
    let daily = groups.get(label)
    if (!daily) groups.set(label, (daily = emptyDaily(days.length)))
    add(daily, position, bucket)
  }
  const ranked = [...groups].map(([label, daily]) => ({
    label,
    ...daily,
    totals: totalsOf(daily),
    other: false,
  }))
  ranked.sort(
    (a, b) =>
      b.totals.chargedNano - a.totals.chargedNano ||
      b.totals.requests - a.totals.requests ||
      a.label.localeCompare(b.label),
  )
  if (ranked.length <= TOP_GROUPS + 1) return ranked
  const rest = emptyDaily(days.length)
  for (const group of ranked.slice(TOP_GROUPS)) {
    for (let day = 0; day < days.length; day += 1) {
      rest.chargedNano[day]! += group.chargedNano[day]!
      rest.requests[day]! += group.requests[day]!
      rest.inputTokens[day]! += group.inputTokens[day]!
      rest.outputTokens[day]! += group.outputTokens[day]!
    }
  }
  const others = ranked.length - TOP_GROUPS
  return [
    ...ranked.slice(0, TOP_GROUPS),
    { label: `${others} others`, ...rest, totals: totalsOf(rest), other: true },
  ]
}

function totalsOf(daily: Daily) {
  const sum = (values: number[]) => values.reduce((total, value) => total + value, 0)
  return {
    chargedNano: sum(daily.chargedNano),
    requests: sum(daily.requests),
    inputTokens: sum(daily.inputTokens),
    outputTokens: sum(daily.outputTokens),
  }
}

/** The day with the most spend, for a chart's summary sentence; undefined when nothing was spent. */
export function busiestDay(
  days: number[],
  chargedNano: number[],
): { day: number; usd: string } | undefined {
  let best = -1
  chargedNano.forEach((value, position) => {
    if (value > 0 && (best < 0 || value > chargedNano[best]!)) best = position
  })
  return best < 0 ? undefined : { day: days[best]!, usd: nanoToUsd(chargedNano[best]!) }
}
