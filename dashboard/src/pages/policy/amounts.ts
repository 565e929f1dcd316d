/**
 * Reading the numbers people type into key and policy forms. A bad entry is refused the way the server
 * would refuse it (an ApiError naming the field), so the form shows it under that field. USD amounts
 * become nano-USD by string arithmetic (shared/money.ts), never through binary floating point.
 */
import { usdToNano } from '../../../../shared/money.ts'
import { ApiError } from '../../api.ts'

const refuse = (param: string, message: string) =>
  new ApiError(400, 'invalid_request', message, param)

/** A whole number of at least `min`, or null for an empty field. */
export function readWhole(text: string, param: string, min = 0): number | null {
  const trimmed = text.trim().replace(/[,_\s]/g, '')
  if (trimmed === '') return null
  if (!/^\d+$/.test(trimmed) || !Number.isSafeInteger(Number(trimmed)) || Number(trimmed) < min) {
    throw refuse(
      param,
      `Enter a whole number${min > 0 ? ` of at least ${min}` : ''}, or leave it empty.`,
    )
  }
  return Number(trimmed)
}

/** A USD amount ("25", "2.50", "$1,000") in nano-USD, or null for an empty field. */
export function readUsd(
  text: string,
  param: string,
  options: { positive?: boolean } = {},
): number | null {
  const trimmed = text.trim().replace(/^\$/, '').replace(/,/g, '')
  if (trimmed === '') return null
  const nano = usdToNano(trimmed)
  if (nano === undefined)
    throw refuse(param, 'Enter an amount in USD, like 25 or 2.50 (at most nine decimals).')
  if (options.positive && nano === 0)
    throw refuse(param, 'Enter an amount above zero, or leave it empty for none.')
  return nano
}

/** A decimal number within [min, max], or undefined for an empty field (for model parameters, not money). */
export function readDecimal(
  text: string,
  param: string,
  min: number,
  max?: number,
): number | undefined {
  const trimmed = text.trim()
  if (trimmed === '') return undefined
  const value = Number(trimmed)
  if (!/^\d*\.?\d+$/.test(trimmed) || value < min || (max !== undefined && value > max)) {
    throw refuse(
      param,
      max === undefined
        ? `Enter a number of at least ${min}.`
        : `Enter a number from ${min} to ${max}.`,
    )
  }
  return value
}

/** A number or null as the text of a form field. */
export const asText = (value: number | null | undefined) =>
  value === null || value === undefined ? '' : String(value)
