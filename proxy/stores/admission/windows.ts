/**
 * Rate counters in two-second buckets and UTC calendar windows for the in-process store; the same
 * arithmetic as lua/lib.lua, which the shared contract tests hold the two to.
 *
 * A rate limit counts the current bucket and the thirty before it. Every span of 60 seconds lies within
 * the buckets the last admission inside it saw, so no such span ever holds more than the limit; what the
 * buckets see reaches up to 62 seconds back, so a client pacing itself at exactly the limit is held to
 * up to a thirty-first less, and a refusal's wait is at most 62 seconds.
 */

export const BUCKET_MS = 2_000
export const BUCKETS = 31
export const DAY_MS = 86_400_000

/** `counts[i]`: what was counted `i` buckets before `bucket`, the latest bucket counted in. */
export type RateCounter = { bucket: number; counts: number[] }

export function bucketOf(nowMs: number): number {
  return Math.floor(nowMs / BUCKET_MS)
}

export function newCounter(): RateCounter {
  return { bucket: 0, counts: new Array<number>(BUCKETS).fill(0) }
}

/** Moves the counter to `bucket`: buckets that leave the view are forgotten. A clock that went back moves nothing. */
export function roll(counter: RateCounter, bucket: number): void {
  const shift = bucket - counter.bucket
  if (shift <= 0) return
  const { counts } = counter
  for (let age = BUCKETS - 1; age >= 0; age--) counts[age] = age >= shift ? counts[age - shift]! : 0
  counter.bucket = bucket
}

/** Counts `amount` in the latest bucket. */
export function count(counter: RateCounter, amount: number): void {
  counter.counts[0] = counter.counts[0]! + amount
}

/** What the buckets in view hold. */
export function rateCount(counter: RateCounter): number {
  let total = 0
  for (const count of counter.counts) total += count
  return total
}

/** Adds `delta` (negative to take back) to what was counted in `bucket`, while it is in view. */
export function adjust(counter: RateCounter, bucket: number, delta: number): void {
  const age = counter.bucket - bucket
  if (age >= 0 && age < BUCKETS) counter.counts[age] = Math.max(0, counter.counts[age]! + delta)
}

/**
 * Milliseconds until `cost` more fits under `limit` (at least 1 s): until enough of the oldest buckets
 * have left the view. A cost above the limit never fits; it is told to wait a minute.
 */
export function rateRetryMs(
  counter: RateCounter,
  nowMs: number,
  limit: number,
  cost: number,
): number {
  if (cost > limit) return 60_000
  let excess = rateCount(counter) + cost - limit
  let wait = 0
  for (let age = BUCKETS - 1; age >= 0; age--) {
    excess -= counter.counts[age]!
    if (excess <= 0) {
      wait = (counter.bucket - age + BUCKETS) * BUCKET_MS - nowMs
      break
    }
  }
  return Math.max(1000, Math.ceil(wait))
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
