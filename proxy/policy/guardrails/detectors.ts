/**
 * Guardrail content detectors: a guardrail's stored filters are checked and compiled once
 * (compileFilters), then every text of a request goes through inspectText before dispatch. Pure and
 * memory-only. Every pattern, built-in or user-supplied, runs on RE2 (re2js), so no pattern and no
 * text can make a search backtrack.
 */
import {
  FILTER_ACTIONS,
  FILTER_DETECTORS,
  FILTER_LABELS,
  FILTER_RULES,
  filterLabel,
  filterProblem,
  GUARDRAIL_LABELS,
  type FilterField,
} from '../../../shared/schemas/admin/field-rules.ts'
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

/** A filter list that cannot be compiled; the message names the filter and its field by their labels. */
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

const DETECTORS: readonly DetectorName[] = FILTER_DETECTORS
const FIELDS = new Set(Object.keys(FILTER_LABELS))
const NAME_FORBIDDEN = new RegExp(FILTER_RULES.nameForbidden)

/** Checks the shape of stored filters (throws FilterError) and compiles their patterns once. */
export function compileFilters(filters: unknown): CompiledFilters {
  if (!Array.isArray(filters))
    throw new FilterError(`${GUARDRAIL_LABELS.filters} must be a list of filters.`)
  if (filters.length > FILTER_RULES.maxFilters)
    throw new FilterError(
      `${GUARDRAIL_LABELS.filters}: ${filters.length} given, at most ${FILTER_RULES.maxFilters}.`,
    )
  const block: CompiledFilter[] = []
  const redact: CompiledFilter[] = []
  filters.forEach((value: unknown, index) => {
    const filter = checkFilter(value, index)
    const compiled = { label: filter.name ?? filter.detector, detector: detectorFor(filter, index) }
    if (filter.action === 'block') block.push(compiled)
    else redact.push(compiled)
  })
  return { block, redact }
}

/** A problem of filter `index`'s `field`, worded as the dashboard's filter editor names them. */
const refuse = (index: number, field: FilterField, problem: string) =>
  new FilterError(filterProblem(index, field, problem))

function checkFilter(value: unknown, index: number): Filter {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new FilterError(`${filterLabel(index)} must be an object with a detector and an action.`)
  const filter = value as Record<string, unknown>
  for (const field of Object.keys(filter))
    if (!FIELDS.has(field))
      throw new FilterError(`${filterLabel(index)}: ${field} is not a field of a filter.`)
  const { detector, action, pattern, keywords, name } = filter
  if (!DETECTORS.includes(detector as DetectorName))
    throw refuse(index, 'detector', `must be one of ${DETECTORS.join(', ')}.`)
  if (!FILTER_ACTIONS.includes(action as FilterAction))
    throw refuse(index, 'action', `must be ${FILTER_ACTIONS.join(' or ')}.`)
  if (detector === 'regex') {
    if (
      typeof pattern !== 'string' ||
      pattern.length === 0 ||
      pattern.length > FILTER_RULES.patternMaxLength
    ) {
      throw refuse(
        index,
        'pattern',
        `is required for a custom pattern: 1 to ${FILTER_RULES.patternMaxLength} characters.`,
      )
    }
  } else if (pattern !== undefined)
    throw refuse(index, 'pattern', 'is only allowed with a custom pattern (the regex detector).')
  if (detector === 'keywords') checkKeywords(keywords, index)
  else if (keywords !== undefined)
    throw refuse(index, 'keywords', 'are only allowed with a keyword list (the keywords detector).')
  if (name !== undefined && (typeof name !== 'string' || !isMarkerLabel(name))) {
    throw refuse(
      index,
      'name',
      `must be 1 to ${FILTER_RULES.nameMaxLength} characters without brackets or control characters.`,
    )
  }
  return filter as unknown as Filter
}

function checkKeywords(keywords: unknown, index: number): void {
  if (
    !Array.isArray(keywords) ||
    keywords.length === 0 ||
    keywords.length > FILTER_RULES.maxKeywords
  ) {
    throw refuse(
      index,
      'keywords',
      `are required for a keyword list: 1 to ${FILTER_RULES.maxKeywords} of them.`,
    )
  }
  keywords.forEach((keyword: unknown, i) => {
    if (
      typeof keyword !== 'string' ||
      keyword.trim().length === 0 ||
      keyword.length > FILTER_RULES.keywordMaxLength
    ) {
      throw refuse(
        index,
        'keywords',
        `must not be blank or longer than ${FILTER_RULES.keywordMaxLength} characters (keyword ${i + 1}).`,
      )
    }
  })
}

// The name goes into `[REDACTED:<name>]` in the text sent upstream, so it cannot close the marker early.
function isMarkerLabel(name: string): boolean {
  return name.length > 0 && name.length <= FILTER_RULES.nameMaxLength && !NAME_FORBIDDEN.test(name)
}

function detectorFor(filter: Filter, index: number): Detector {
  if (filter.detector === 'keywords') return keywordDetector(filter.keywords!)
  if (filter.detector !== 'regex') return BUILTIN_DETECTORS[filter.detector]
  const compiled = regexDetector(filter.pattern!)
  if (!compiled.ok) throw refuse(index, 'pattern', `${compiled.reason}.`)
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
