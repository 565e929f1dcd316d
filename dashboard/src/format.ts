/** How numbers, money and times read on every page. Money arrives as decimal USD strings beside nano-USD. */

const countFormat = new Intl.NumberFormat('en-US')
const compactFormat = new Intl.NumberFormat('en-US', {
  notation: 'compact',
  maximumFractionDigits: 1,
})

const USD_TEXT = /^(-?)(\d+)(?:\.(\d+))?$/

/**
 * "$1.50", "$0.000123", "-$0.000000005", "$1,234,567.891": a decimal USD string as the server sends it,
 * to the last nano-USD it states, with at least two decimals. Read as text, never through a float, so
 * an amount below a millionth of a dollar does not show as "$0.00" (or "-$0.00").
 */
export function usd(value: string | null | undefined): string {
  if (value === null || value === undefined) return '—'
  const match = USD_TEXT.exec(value.trim())
  if (!match) return value
  const [, sign, whole, fraction = ''] = match
  const digits = fraction.replace(/0+$/, '').padEnd(2, '0')
  const zero = /^0+$/.test(whole!) && /^0*$/.test(fraction)
  const grouped = whole!.replace(/^0+(?=\d)/, '').replace(/\B(?=(\d{3})+(?!\d))/g, ',')
  return `${sign && !zero ? '-' : ''}$${grouped}.${digits}`
}

/** For charts and totals only: nano-USD to a float of dollars (display, never arithmetic on money). */
export function nanoToDollars(nano: number): number {
  return nano / 1e9
}

export function count(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : countFormat.format(value)
}

/** "1 error", "2 errors", "1,204 tokens": a count with its noun in the right number. */
export function counted(value: number, noun: string, plural = `${noun}s`): string {
  return `${count(value)} ${value === 1 ? noun : plural}`
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

/** A key as lists name it: its name (or "Unnamed key") and its prefix. */
export const keyWithPrefix = (key: { name?: string | null; prefix: string }) =>
  `${key.name || 'Unnamed key'} (${key.prefix}…)`
