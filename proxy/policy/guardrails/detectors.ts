/**
 * Guardrail content detectors: a guardrail's stored filters are checked and compiled once
 * (compileFilters), then every text of a request goes through inspectText before dispatch. Pure and
 * memory-only. Every pattern, built-in or user-supplied, runs on RE2 (re2js), so no pattern and no
 * text can make a search backtrack.
 */
import { BUILTIN_DETECTORS } from './builtin-detectors.ts'
import { keywordDetector, regexDetector } from './custom-detectors.ts'
import { redactSpans, type LabelledSpan } from './redact.ts'
import { findSpans, type Detector, type DetectorName } from './scan.ts'

export type FilterAction = 'block' | 'redact'

/**
 * One stored filter of a guardrail. `pattern` (RE2 syntax) is required for `regex`, `keywords` for
 * `keywords`; `name` labels a filter in findings and redaction markers instead of the detector name.
 */
export interface Filter {
  detector: DetectorName
  action: FilterAction
  pattern?: string
  keywords?: string[]
  name?: string
}

/** A filter list that cannot be compiled; the message names the filter index and field. */
export class FilterError extends Error {
  override name = 'FilterError'
}

type CompiledFilter = { label: string; detector: Detector }

/** A guardrail's filters, ready for inspectText. Treat as opaque. */
export interface CompiledFilters {
  readonly block: readonly CompiledFilter[]
  readonly redact: readonly CompiledFilter[]
}

/** What matched: the filter's name, or its detector's. Never the matched text. */
export interface Finding {
  detector: string
  action: FilterAction
  /** For a redaction, how many matches were replaced. */
  count?: number
}

const DETECTORS: readonly DetectorName[] = [
  'email',
  'phone',
  'credit_card',
  'iban',
  'us_ssn',
  'ip_address',
  'secret',
  'regex',
  'keywords',
]
const FIELDS = new Set(['detector', 'action', 'pattern', 'keywords', 'name'])
const MAX_FILTERS = 50
const MAX_PATTERN_LENGTH = 1000
const MAX_KEYWORDS = 500
const MAX_KEYWORD_LENGTH = 200
const MAX_NAME_LENGTH = 64

/** Checks the shape of stored filters (throws FilterError) and compiles their patterns once. */
export function compileFilters(filters: unknown): CompiledFilters {
  if (!Array.isArray(filters)) throw new FilterError('filters must be a list')
  if (filters.length > MAX_FILTERS)
    throw new FilterError(
      `filters has ${filters.length} entries; at most ${MAX_FILTERS} are allowed`,
    )
  const block: CompiledFilter[] = []
  const redact: CompiledFilter[] = []
  filters.forEach((value: unknown, index) => {
    const filter = checkFilter(value, `filters[${index}]`)
    const compiled = {
      label: filter.name ?? filter.detector,
      detector: detectorFor(filter, `filters[${index}]`),
    }
    if (filter.action === 'block') block.push(compiled)
    else redact.push(compiled)
  })
  return { block, redact }
}

function checkFilter(value: unknown, at: string): Filter {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new FilterError(`${at} must be an object`)
  const filter = value as Record<string, unknown>
  for (const field of Object.keys(filter))
    if (!FIELDS.has(field)) throw new FilterError(`${at}.${field} is not a known field`)
  const { detector, action, pattern, keywords, name } = filter
  if (!DETECTORS.includes(detector as DetectorName))
    throw new FilterError(`${at}.detector must be one of ${DETECTORS.join(', ')}`)
  if (action !== 'block' && action !== 'redact')
    throw new FilterError(`${at}.action must be block or redact`)
  if (detector === 'regex') {
    if (
      typeof pattern !== 'string' ||
      pattern.length === 0 ||
      pattern.length > MAX_PATTERN_LENGTH
    ) {
      throw new FilterError(
        `${at}.pattern is required for the regex detector: a non-empty string of at most ${MAX_PATTERN_LENGTH} characters`,
      )
    }
  } else if (pattern !== undefined)
    throw new FilterError(`${at}.pattern is only allowed with the regex detector`)
  if (detector === 'keywords') checkKeywords(keywords, `${at}.keywords`)
  else if (keywords !== undefined)
    throw new FilterError(`${at}.keywords is only allowed with the keywords detector`)
  // The name goes into `[REDACTED:<name>]` in the text sent upstream, so it cannot close the marker early.
  if (name !== undefined && (typeof name !== 'string' || !isMarkerLabel(name))) {
    throw new FilterError(
      `${at}.name must be 1 to ${MAX_NAME_LENGTH} characters without brackets or control characters`,
    )
  }
  return filter as unknown as Filter
}

function checkKeywords(keywords: unknown, at: string): void {
  if (!Array.isArray(keywords) || keywords.length === 0 || keywords.length > MAX_KEYWORDS) {
    throw new FilterError(
      `${at} is required for the keywords detector: a list of 1 to ${MAX_KEYWORDS} strings`,
    )
  }
  keywords.forEach((keyword: unknown, i) => {
    if (
      typeof keyword !== 'string' ||
      keyword.trim().length === 0 ||
      keyword.length > MAX_KEYWORD_LENGTH
    ) {
      throw new FilterError(
        `${at}[${i}] must be a non-blank string of at most ${MAX_KEYWORD_LENGTH} characters`,
      )
    }
  })
}

function isMarkerLabel(name: string): boolean {
  if (name.length === 0 || name.length > MAX_NAME_LENGTH) return false
  for (let i = 0; i < name.length; i++) {
    const code = name.charCodeAt(i)
    if (code < 32 || code === 127 || code === 91 || code === 93) return false
  }
  return true
}

function detectorFor(filter: Filter, at: string): Detector {
  if (filter.detector === 'keywords') return keywordDetector(filter.keywords!)
  if (filter.detector !== 'regex') return BUILTIN_DETECTORS[filter.detector]
  const compiled = regexDetector(filter.pattern!)
  if (!compiled.ok) throw new FilterError(`${at}.pattern ${compiled.reason}`)
  return compiled.detector
}

export function hasFilters(compiled: CompiledFilters): boolean {
  return compiled.block.length > 0 || compiled.redact.length > 0
}

/**
 * Scans one text. The first block filter (in filter order) that matches wins and the text comes back
 * unchanged. Otherwise every match of every redact filter becomes `[REDACTED:<label>]`, with one
 * finding per redact filter that matched, counting its matches. When nothing matched, `text` is the very string passed in,
 * so callers can skip rewriting.
 */
export function inspectText(
  text: string,
  compiled: CompiledFilters,
): { blocked?: Finding; text: string; redacted: Finding[] } {
  for (const filter of compiled.block) {
    if (findSpans(filter.detector, text, true).length > 0)
      return { blocked: { detector: filter.label, action: 'block' }, text, redacted: [] }
  }
  const spans: LabelledSpan[] = []
  const redacted: Finding[] = []
  compiled.redact.forEach((filter, order) => {
    const found = findSpans(filter.detector, text)
    if (found.length === 0) return
    redacted.push({ detector: filter.label, action: 'redact', count: found.length })
    for (const [start, end] of found) spans.push({ start, end, order, label: filter.label })
  })
  return { text: spans.length === 0 ? text : redactSpans(text, spans), redacted }
}
