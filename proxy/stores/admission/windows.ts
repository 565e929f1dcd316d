/**
 * Sliding-window rate counters and UTC calendar windows for the in-process store; the same arithmetic
 * as lua/lib.lua, which the shared contract tests hold the two to.
 */

export const WINDOW_MS = 60_000
export const DAY_MS = 86_400_000

/** Counts of the current and previous minute; `window` is the current minute's index. */
export type RateCounter = { window: number; current: number; previous: number }

export function newCounter(): RateCounter {
  return { window: 0, current: 0, previous: 0 }
}

export function roll(counter: RateCounter, window: number): void {
  if (counter.window === window) return
  counter.previous = counter.window === window - 1 ? counter.current : 0
  counter.current = 0
  counter.window = window
}

/** The previous minute weighted by the part of it still inside the last 60 seconds, plus the current one. */
export function rateEstimate(counter: RateCounter, nowMs: number): number {
  const elapsed = nowMs - counter.window * WINDOW_MS
  return (counter.previous * (WINDOW_MS - elapsed)) / WINDOW_MS + counter.current
}

/** Milliseconds until `cost` more fits under `limit` (at least 1 s, at most 2 minutes). */
export function rateRetryMs(
  counter: RateCounter,
  nowMs: number,
  limit: number,
  cost: number,
): number {
  const elapsed = nowMs - counter.window * WINDOW_MS
  let wait: number
  if (cost > limit) wait = WINDOW_MS
  else if (counter.current + cost <= limit)
    wait = WINDOW_MS - elapsed - (WINDOW_MS * (limit - counter.current - cost)) / counter.previous
  else wait = WINDOW_MS - elapsed + WINDOW_MS * (1 - (limit - cost) / counter.current)
  return Math.max(1000, Math.min(2 * WINDOW_MS, Math.ceil(wait)))
}

/** The UTC day and month (year × 12 + month − 1) of an instant, and the instants they end. */
export function calendar(nowMs: number): {
  day: number
  month: number
  dayEndMs: number
  monthEndMs: number
} {
  const day = Math.floor(nowMs / DAY_MS)
  const date = new Date(nowMs)
  const year = date.getUTCFullYear()
  const month = date.getUTCMonth()
  return {
    day,
    month: year * 12 + month,
    dayEndMs: (day + 1) * DAY_MS,
    monthEndMs: Date.UTC(year, month + 1, 1),
  }
}
