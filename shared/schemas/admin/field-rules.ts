/**
 * The rules and labels of the fields people fill in the limit and preset forms, as plain data: the
 * admin schemas (policy.ts, keys.ts) are built from these numbers and carry these labels as titles, and
 * the dashboard checks a form with the same numbers before sending it, without loading TypeBox. A
 * refusal of a titled field names it by its label (the site server's validation errors).
 */

/** An account's requests or tokens per minute or requests at once: a whole number, 0 for no limit. */
export const ACCOUNT_LIMIT = { minimum: 0, maximum: 1_000_000_000 } as const

/** A key's limit: at least 1 (null, not 0, is none: 0 would read as a limit of nothing). */
export const KEY_LIMIT = { minimum: 1 } as const

/** The labels of the per-minute and concurrency limits, for an account and for a key. */
export const LIMIT_LABELS = {
  rpmLimit: 'Requests per minute',
  tpmLimit: 'Tokens per minute',
  concurrency: 'Requests at once',
} as const

/** A preset's slug, as clients send it after `@preset/`. */
export const PRESET_SLUG_PATTERN = '^[a-z0-9][a-z0-9-]{0,62}$'

/** What a preset's default parameters may be. */
export const PRESET_PARAM_RULES = {
  temperature: { minimum: 0, maximum: 2 },
  top_p: { minimum: 0, maximum: 1 },
  max_tokens: { minimum: 1 },
  stop: { maxItems: 4 },
} as const

/** At most this many fallbacks in a preset. */
export const PRESET_MAX_FALLBACKS = 3

/** The labels of a preset's fields, keyed by the field a refusal names (`param`). */
export const PRESET_LABELS = {
  slug: 'Slug',
  model: 'Model',
  fallbacks: 'Fallbacks',
  'params.temperature': 'Temperature',
  'params.top_p': 'Top P',
  'params.max_tokens': 'Max tokens',
  'params.stop': 'Stop sequences',
} as const

/** How a refusal names one of a preset's fallbacks (`fallbacks[1]` is "Fallback 2"). */
export const fallbackLabel = (index: number) => `Fallback ${index + 1}`
