/**
 * Running one compiled detector over one text. Patterns are RE2 (re2js), so each search is linear in
 * the text whatever the pattern; this file keeps the number of searches bounded too.
 */
import type { RE2JS } from 're2js'

/** A finding's place in the text: [start, end) in UTF-16 code units. */
/** The detectors a guardrail filter can name: the built-in ones, a pattern and a keyword list. */
export type DetectorName =
  | 'email'
  | 'phone'
  | 'credit_card'
  | 'iban'
  | 'us_ssn'
  | 'ip_address'
  | 'secret'
  | 'regex'
  | 'keywords'

export type Span = [start: number, end: number]

export interface Detector {
  /** Finds candidates; searched with the full text as context, so `\b` and `^` see the real neighbours. */
  pattern: RE2JS
  /** The capture group that is the candidate. Built-ins use group 1 and spend group 0's first character on a left boundary, which RE2 cannot assert. */
  group: 0 | 1
  /** False when the text cannot hold a candidate. Cheap checks first, then RE2's DFA, which is far faster than a located search. */
  mayMatch: (text: string) => boolean
  /** Turns a candidate into findings (check digits, right boundary); absent means the candidate is one. */
  confirm?: (text: string, start: number, end: number) => Span[]
  /** Searches allowed per text, for user patterns: see findSpans. */
  maxSearches?: number
}

/**
 * The detector's findings in `text`, leftmost first and non-overlapping; with `firstOnly`, at most one.
 *
 * A search resumes where the last candidate ended. A user pattern can make each search look ahead
 * to the end of the text before settling on a short match (`.*z|a` over a run of `a`), so many matches
 * cost quadratic time; after `maxSearches` the rest of the text counts as one finding. That fails
 * closed: a block filter blocks, a redact filter redacts the remainder.
 */
export function findSpans(detector: Detector, text: string, firstOnly = false): Span[] {
  const spans: Span[] = []
  if (!detector.mayMatch(text)) return spans
  const matcher = detector.pattern.matcher(text)
  const limit = detector.maxSearches ?? Infinity
  let searches = 0
  let position = 0
  while (position <= text.length && matcher.find(position)) {
    if (++searches > limit) {
      spans.push([position, text.length])
      return spans
    }
    const start = matcher.start(detector.group)
    const end = matcher.end(detector.group)
    if (start === end) {
      // An empty match redacts nothing; step over one character (both halves of a surrogate pair).
      position = end + (isSurrogatePair(text, end) ? 2 : 1)
      continue
    }
    if (detector.confirm) spans.push(...detector.confirm(text, start, end))
    else spans.push([start, end])
    if (firstOnly && spans.length > 0) return spans.slice(0, 1)
    position = matcher.end()
  }
  return spans
}

function isSurrogatePair(text: string, index: number): boolean {
  const code = text.charCodeAt(index)
  return code >= 0xd800 && code <= 0xdbff && index + 1 < text.length
}
