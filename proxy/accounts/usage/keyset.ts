/**
 * Keyset pages over an account's history tables (the request log, the ledger), newest first. A page
 * continues after the previous page's last row: its time in microseconds (what timestamptz holds) and a
 * unique tie-breaker for rows of the same microsecond. An opaque base64url cursor carries both, so
 * clients never build one; the query's time range is checked here too, each refusal naming its field.
 */
import { ServiceError } from '../../../shared/errors.ts'

export type Cursor = { atUs: number; tie: string }

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(`${cursor.atUs}:${cursor.tie}`).toString('base64url')
}

/** The cursor in `text`; `tie` is what the tie-breaker must look like (a request ID, a row number). */
export function decodeCursor(text: string, tie: RegExp = /^\S{1,100}$/): Cursor {
  const match = /^(\d{1,17}):(\S{1,100})$/.exec(Buffer.from(text, 'base64url').toString())
  if (!match || !tie.test(match[2]!))
    throw new ServiceError(
      'invalid_request',
      'before: not a cursor from a previous page (use its nextBefore).',
      { param: 'before' },
    )
  return { atUs: Number(match[1]), tie: match[2]! }
}

/** The page size: a whole number from 1 to `max` (a query string carries text). */
export function parseLimit(text: string | undefined, fallback: number, max: number): number {
  const limit = text === undefined ? fallback : Number(text)
  if (!Number.isInteger(limit) || limit < 1 || limit > max) {
    throw new ServiceError('invalid_request', `limit: must be a whole number from 1 to ${max}.`, {
      param: 'limit',
    })
  }
  return limit
}

export function parseTime(value: string, param: string): number {
  const ms = Date.parse(value)
  if (!Number.isFinite(ms))
    throw new ServiceError(
      'invalid_request',
      `${param}: not an ISO 8601 time (e.g. 2025-01-31T00:00:00Z).`,
      { param },
    )
  return ms
}

/** An optional `from` (inclusive) and `to` (exclusive) as Dates; from must come before to. */
export function parseRange(range: { from?: string; to?: string }): { from?: Date; to?: Date } {
  const from = range.from === undefined ? undefined : new Date(parseTime(range.from, 'from'))
  const to = range.to === undefined ? undefined : new Date(parseTime(range.to, 'to'))
  if (from && to && from >= to)
    throw new ServiceError('invalid_request', 'from: must be before to.', { param: 'from' })
  return { from, to }
}
