/**
 * The operator command line's options and how their values are read: dollars as integer nano-USD,
 * `none` as null for a limit, a cap or a list, and a usage error naming the option when a value is
 * not what it must be.
 */
import { nanoToUsd, usdToNano } from '../../shared/money.ts'
import { ACCOUNT_LIMIT } from '../../shared/schemas/admin/field-rules.ts'

export const options = {
  account: { type: 'string' },
  'credit-usd': { type: 'string' },
  usd: { type: 'string' },
  reason: { type: 'string' },
  note: { type: 'string' },
  id: { type: 'string' },
  name: { type: 'string' },
  rpm: { type: 'string' },
  tpm: { type: 'string' },
  concurrency: { type: 'string' },
  'daily-usd': { type: 'string' },
  'monthly-usd': { type: 'string' },
  models: { type: 'string' },
  model: { type: 'string' },
  fallbacks: { type: 'string' },
  temperature: { type: 'string' },
  'top-p': { type: 'string' },
  'max-tokens': { type: 'string' },
  stop: { type: 'string' },
  providers: { type: 'string' },
  guardrail: { type: 'string' },
  'budget-usd': { type: 'string' },
  filters: { type: 'string' },
  minutes: { type: 'string' },
  until: { type: 'string' },
  status: { type: 'string' },
  state: { type: 'string' },
  body: { type: 'string' },
  'no-mail': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

/**
 * The arguments with a negative number given to an option that takes a value joined to it
 * (`--usd -1` as `--usd=-1`), so that it is refused as the value it is, naming the option's range,
 * rather than read as an unknown option.
 */
export function joinNegativeNumbers(args: string[]): string[] {
  const joined: string[] = []
  for (let i = 0; i < args.length; i++) {
    const name = /^--([a-z-]+)$/.exec(args[i]!)?.[1]
    const next = args[i + 1]
    const takesValue = (options as Record<string, { type: string }>)[name ?? '']?.type === 'string'
    if (takesValue && next !== undefined && /^-\d/.test(next)) {
      joined.push(`${args[i]}=${next}`)
      i++
    } else joined.push(args[i]!)
  }
  return joined
}

export type Values = Partial<Record<keyof typeof options, string | boolean>>

export class UsageError extends Error {}

export function required(values: Values, name: keyof typeof options): string {
  const value = values[name]
  if (typeof value !== 'string' || value === '') missing(name)
  return value
}

export function missing(name: keyof typeof options): never {
  throw new UsageError(`--${name} is required`)
}

export function integer(values: Values, name: keyof typeof options): number | undefined {
  const value = values[name]
  if (value === undefined) return undefined
  if (typeof value !== 'string' || !/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)))
    throw new UsageError(
      `--${name} must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER} (got ${value})`,
    )
  return Number(value)
}

/**
 * Dollars as integer nano-USD; `above` (a credit, a cap) refuses 0, and the message gives the range the
 * option takes (`orNone`: what else it takes).
 */
export function nano(
  values: Values,
  name: 'credit-usd' | 'usd' | 'daily-usd' | 'monthly-usd' | 'budget-usd',
  { above = false, orNone = '' } = {},
): number | undefined {
  const value = values[name]
  if (value === undefined) return undefined
  const amount = typeof value === 'string' ? usdToNano(value) : undefined
  if (amount === undefined || (above && amount === 0)) {
    const most = nanoToUsd(Number.MAX_SAFE_INTEGER)
    const range = above ? `more than 0 and at most ${most}` : `from 0 to ${most}`
    throw new UsageError(
      `--${name} must be an amount in USD ${range}, in digits with at most 9 decimals, such as 5 or 0.25${orNone} (got ${value})`,
    )
  }
  return amount
}

/** A required amount of dollars above 0 (a credit) as integer nano-USD. */
export function positiveNano(values: Values, name: 'usd'): number {
  return nano(values, name, { above: true }) ?? missing(name)
}

/** A spend cap or budget in nano-USD, above 0, or null for `none`. */
export function cap(
  values: Values,
  name: 'daily-usd' | 'monthly-usd' | 'budget-usd',
): number | null | undefined {
  if (values[name] === 'none') return null
  return nano(values, name, { above: true, orNone: ', or none for no cap' })
}

/**
 * A requests-per-minute, tokens-per-minute or concurrency limit: a whole number up to the most an
 * account's limit may be, which a key's limit cannot usefully pass either.
 */
export function count(values: Values, name: 'rpm' | 'tpm' | 'concurrency'): number | undefined {
  const value = values[name]
  if (value === undefined) return undefined
  if (typeof value !== 'string' || !/^\d+$/.test(value) || Number(value) > ACCOUNT_LIMIT.maximum)
    throw new UsageError(
      `--${name} must be a whole number up to ${ACCOUNT_LIMIT.maximum} (got ${value})`,
    )
  return Number(value)
}

/** A limit, or null for `none`. */
export function limit(
  values: Values,
  name: 'rpm' | 'tpm' | 'concurrency',
): number | null | undefined {
  return values[name] === 'none' ? null : count(values, name)
}

/** A number of at least 0 (`above`: more than 0). */
export function decimal(
  values: Values,
  name: keyof typeof options,
  { above = false } = {},
): number | undefined {
  const value = values[name]
  if (value === undefined) return undefined
  if (typeof value !== 'string' || !/^\d+(\.\d+)?$/.test(value) || (above && Number(value) === 0))
    throw new UsageError(
      `--${name} must be a number ${above ? 'more than 0' : 'of at least 0'}, such as 0.5 (got ${value})`,
    )
  return Number(value)
}

export function list(values: Values, name: keyof typeof options): string[] | undefined {
  const value = values[name]
  return typeof value === 'string'
    ? value
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean)
    : undefined
}

/** A comma-separated list, or null for `none`. */
export function listOrNone(
  values: Values,
  name: keyof typeof options,
): string[] | null | undefined {
  return values[name] === 'none' ? null : list(values, name)
}

export function json(values: Values, name: keyof typeof options): unknown {
  const value = values[name]
  if (typeof value !== 'string') return undefined
  try {
    return JSON.parse(value)
  } catch (error) {
    throw new UsageError(`--${name} must be JSON: ${(error as Error).message}`)
  }
}

/** The positional arguments after the command words, exactly as many as `names`. */
export function positional(args: string[], names: string[]): string[] {
  if (args.length > names.length)
    throw new UsageError(`Unexpected argument: ${args.slice(names.length).join(' ')}`)
  if (args.length < names.length) throw new UsageError(`Expected ${names.join(' ')}`)
  return args.map(encodeURIComponent)
}
