/**
 * Money is integer nano-USD (1 USD = 1e9 nano). Conversions to and from decimal USD work on strings,
 * never on binary floating point. Amounts handled by the service stay below 2^53 nano (about
 * 9 million USD per account), so a JavaScript number holds them exactly.
 */

export const NANO_PER_USD = 1_000_000_000

/** A decimal USD amount as schemas write it: digits, at most nine decimals ("5", "2.50"). */
export const USD_AMOUNT_PATTERN = '^(\\d+)(?:\\.(\\d{1,9}))?$'
const decimalPattern = new RegExp(USD_AMOUNT_PATTERN)

/** Parses a non-negative decimal USD amount such as "12.5" into nano-USD; undefined if it is not one. */
export function usdToNano(usd: string | number): number | undefined {
  const text = typeof usd === 'number' ? numberToPlainString(usd) : usd.trim()
  const match = decimalPattern.exec(text)
  if (!match) return undefined
  const whole = match[1]!
  const fraction = (match[2] ?? '').padEnd(9, '0')
  const nano = BigInt(whole) * 1_000_000_000n + BigInt(fraction)
  if (nano > BigInt(Number.MAX_SAFE_INTEGER)) return undefined
  return Number(nano)
}

/** Formats nano-USD as a decimal USD string with up to nine decimals and no trailing zeros: "0.000123". */
export function nanoToUsd(nano: number | bigint): string {
  const value = typeof nano === 'bigint' ? nano : Number.isSafeInteger(nano) ? nano : BigInt(nano)
  const negative = value < 0
  const abs = negative ? -value : value
  // Safe integers divide exactly as numbers; larger amounts take the BigInt path.
  const whole = typeof abs === 'number' ? Math.floor(abs / NANO_PER_USD) : abs / 1_000_000_000n
  const rest = typeof abs === 'number' ? abs % NANO_PER_USD : abs % 1_000_000_000n
  const fraction =
    rest === 0 || rest === 0n ? '' : rest.toString().padStart(9, '0').replace(/0+$/, '')
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`
}

/** A JavaScript number written without exponent, as its shortest round-trip decimal (0.0375 → "0.0375"). */
function numberToPlainString(value: number): string {
  if (!Number.isFinite(value) || value < 0) return 'invalid'
  const text = String(value)
  if (!text.includes('e')) return text
  return value.toFixed(20).replace(/0+$/, '').replace(/\.$/, '')
}
