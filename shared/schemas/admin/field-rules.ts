/**
 * The rules and labels of the fields people fill in the limit, key, preset and guardrail forms, as plain
 * data: the admin schemas (policy.ts, keys.ts) and the guardrail filter checks are built from these
 * numbers and carry these labels as titles, and the dashboard checks a form with the same numbers before
 * sending it, without loading TypeBox. A refusal names a field by its label, as the form shows it.
 */

/** An account's requests or tokens per minute or requests at once: a whole number, 0 for no limit. */
export const ACCOUNT_LIMIT = { minimum: 0, maximum: 1_000_000_000 } as const

/**
 * A key's limit: at least 1 (null, not 0, is none: 0 would read as a limit of nothing), and at most what
 * an account's limit may be.
 */
export const KEY_LIMIT = { minimum: 1, maximum: ACCOUNT_LIMIT.maximum } as const

/** The labels of the per-minute and concurrency limits, for an account and for a key. */
export const LIMIT_LABELS = {
  rpmLimit: 'Requests per minute',
  tpmLimit: 'Tokens per minute',
  concurrency: 'Requests at once',
} as const

/** The labels of allow-lists: a key's, a guardrail's and the account's routing restriction. */
export const ALLOWLIST_LABELS = {
  models: 'Allowed models',
  providers: 'Allowed providers',
} as const

/** The labels of a key's fields, keyed by the field a refusal names (`param`). */
export const KEY_LABELS = {
  name: 'Name',
  ...LIMIT_LABELS,
  dailyLimitNano: 'Daily spend cap (USD)',
  monthlyLimitNano: 'Monthly spend cap (USD)',
  allowedModels: ALLOWLIST_LABELS.models,
  guardrailId: 'Guardrail',
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

/** A guardrail's name: unique in its account. */
export const GUARDRAIL_NAME = { minLength: 1, maxLength: 100 } as const

/** The labels of a guardrail's fields, keyed by the field a refusal names (`param`). */
export const GUARDRAIL_LABELS = {
  name: 'Name',
  models: ALLOWLIST_LABELS.models,
  budgetNano: 'Monthly budget (USD)',
  filters: 'Content filters',
} as const

/** The detectors a content filter may use, and what it may do on a match. */
export const FILTER_DETECTORS = [
  'email',
  'phone',
  'credit_card',
  'iban',
  'us_ssn',
  'ip_address',
  'secret',
  'regex',
  'keywords',
] as const
export type FilterDetector = (typeof FILTER_DETECTORS)[number]
export const FILTER_ACTIONS = ['block', 'redact'] as const

/**
 * What a guardrail's content filters may hold. A filter's name goes into `[REDACTED:<name>]` in the text
 * sent upstream, so it has no brackets (it cannot close the marker early) and no control characters.
 */
export const FILTER_RULES = {
  maxFilters: 50,
  patternMaxLength: 1000,
  maxKeywords: 500,
  keywordMaxLength: 200,
  nameMaxLength: 64,
  /** Characters a name may not hold. */
  nameForbidden: '[\\u0000-\\u001f\\u007f\\[\\]]',
} as const

/** The labels of a filter's fields (`filters[0].pattern` is Filter 1's "Pattern"). */
export const FILTER_LABELS = {
  detector: 'Detector',
  action: 'Action',
  name: 'Label',
  pattern: 'Pattern',
  keywords: 'Keywords',
} as const
export type FilterField = keyof typeof FILTER_LABELS

/** How a refusal names one of a guardrail's filters (`filters[1]` is "Filter 2"). */
export const filterLabel = (index: number) => `Filter ${index + 1}`

/**
 * A filter's problem as refusals word it, "Filter 2: Pattern is not a valid pattern: …": the filter by
 * its label, then the field's. The dashboard reads the two back to show the problem under that field.
 */
export const filterProblem = (index: number, field: FilterField, problem: string) =>
  `${filterLabel(index)}: ${FILTER_LABELS[field]} ${problem}`

/** "A, B or C": the fields a change may give, for a refusal of a change that gives none. */
export function nothingToChange(labels: readonly string[]): string {
  const last = labels.at(-1) ?? ''
  const list = labels.length > 1 ? `${labels.slice(0, -1).join(', ')} or ${last}` : last
  return `Nothing to change: give ${list}.`
}

/**
 * An e-mail address as sign-in and invitations take it. Deliberately loose: the mail server is the
 * judge; this only refuses what cannot be an address (no spaces, something on each side of one @).
 */
export const EMAIL_RULE = { minLength: 3, maxLength: 254, pattern: '^[^\\s@]+@[^\\s@]+$' } as const
