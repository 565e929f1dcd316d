/**
 * Reading the numbers people type into key and policy forms. A bad entry is refused the way the server
 * would refuse it (an ApiError naming the field), so the form shows it under that field. USD amounts
 * become nano-USD by string arithmetic (shared/money.ts), never through binary floating point.
 */
import { usdToNano } from '../../../../shared/money.ts'
import { refuse } from '../../form-check.ts'

/** What a number field accepts: the bounds of its schema (shared/schemas/admin/field-rules.ts). */
export type Bounds = { readonly minimum?: number; readonly maximum?: number }

/** The range a field accepts, in words: "of at least 1", "from 0 to 2". */
function range(bounds: Bounds): string {
  const { minimum, maximum } = bounds
  if (maximum === undefined) return minimum ? ` of at least ${minimum.toLocaleString('en-US')}` : ''
  return ` from ${(minimum ?? 0).toLocaleString('en-US')} to ${maximum.toLocaleString('en-US')}`
}

/** A whole number within `bounds`, or null for an empty field. */
export function readWhole(text: string, param: string, bounds: Bounds = {}): number | null {
  const trimmed = text.trim().replace(/[,_\s]/g, '')
  if (trimmed === '') return null
  const value = Number(trimmed)
  if (
    !/^\d+$/.test(trimmed) ||
    !Number.isSafeInteger(value) ||
    value < (bounds.minimum ?? 0) ||
    (bounds.maximum !== undefined && value > bounds.maximum)
  ) {
    throw refuse(param, `Enter a whole number${range(bounds)}, or leave it empty.`)
  }
  return value
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

/** A decimal number within `bounds`, or undefined for an empty field (for model parameters, not money). */
export function readDecimal(text: string, param: string, bounds: Bounds): number | undefined {
  const trimmed = text.trim()
  if (trimmed === '') return undefined
  const value = Number(trimmed)
  if (
    !/^\d*\.?\d+$/.test(trimmed) ||
    value < (bounds.minimum ?? 0) ||
    (bounds.maximum !== undefined && value > bounds.maximum)
  ) {
    throw refuse(param, `Enter a number${range(bounds)}, or leave it empty.`)
  }
  return value
}

/** A number or null as the text of a form field. */
export const asText = (value: number | null | undefined) =>
  value === null || value === undefined ? '' : String(value)
