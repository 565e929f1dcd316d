/** How numbers, money and times read on every page. Money arrives as decimal USD strings beside nano-USD. */

const usdFormat = new Intl.NumberFormat('en-US', {
  style: 'currency',
  currency: 'USD',
  minimumFractionDigits: 2,
  maximumFractionDigits: 6,
})
const countFormat = new Intl.NumberFormat('en-US')
const compactFormat = new Intl.NumberFormat('en-US', {
  notation: 'compact',
  maximumFractionDigits: 1,
})

/** "$1.50", "$0.000123": a decimal USD string as the server sends it (never parsed through cents math). */
export function usd(value: string | null | undefined): string {
  if (value === null || value === undefined) return '—'
  const amount = Number(value)
  return Number.isFinite(amount) ? usdFormat.format(amount) : value
}

/** For charts and totals only: nano-USD to a float of dollars (display, never arithmetic on money). */
export function nanoToDollars(nano: number): number {
  return nano / 1e9
}

export function count(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : countFormat.format(value)
}

export function compact(value: number): string {
  return compactFormat.format(value)
}

export function dateTime(iso: string | null | undefined): string {
  if (!iso) return '—'
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })
}

/** "3 minutes ago", "in 23 hours". */
export function relative(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return 'never'
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000)
  const units: [Intl.RelativeTimeFormatUnit, number][] = [
    ['day', 86_400],
    ['hour', 3_600],
    ['minute', 60],
    ['second', 1],
  ]
  const format = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' })
  for (const [unit, size] of units)
    if (Math.abs(seconds) >= size || unit === 'second')
      return format.format(Math.round(seconds / size), unit)
  return ''
}
