/**
 * Detectors built from a guardrail's own input: an RE2 pattern, or a keyword list turned into one
 * escaped RE2 alternation. Both are compiled once per guardrail version.
 */
import { RE2JS, RE2JSSyntaxException } from 're2js'
import { isWordChar } from './checksums.ts'
import type { Detector } from './scan.ts'

/** Well above any hand-written pattern; `a{1000}` repeated across 1,000 characters would be about 140,000. */
const MAX_PROGRAM_SIZE = 10_000
/** Searches per text before a user pattern fails closed (see findSpans): bounds the worst case at this many linear scans. */
const MAX_PATTERN_SEARCHES = 256

export type Compiled = { ok: true; detector: Detector } | { ok: false; reason: string }

/** A user pattern, case-sensitive as written (`(?i)` makes it insensitive). */
export function regexDetector(source: string): Compiled {
  let pattern: RE2JS
  try {
    pattern = RE2JS.compile(source)
  } catch (error) {
    const reason =
      error instanceof RE2JSSyntaxException ? error.getDescription() : (error as Error).message
    return { ok: false, reason: `is not a valid pattern: ${reason}` }
  }
  // An empty match has nothing to redact, and a filter that matches everywhere is a mistake.
  if (pattern.testExact('')) return { ok: false, reason: 'matches the empty string' }
  if (pattern.programSize() > MAX_PROGRAM_SIZE) return { ok: false, reason: 'is too complex' }
  return {
    ok: true,
    detector: {
      pattern,
      group: 0,
      mayMatch: (text) => pattern.test(text),
      maxSearches: MAX_PATTERN_SEARCHES,
    },
  }
}

/**
 * Keywords match literally and case-insensitively. A keyword that starts (ends) with a word
 * character must start (end) on a word boundary, so `cat` misses `concatenate` but `c++` still
 * matches. Longest match, so of `c` and `c++` the longer wins.
 */
export function keywordDetector(keywords: string[]): Detector {
  const unique = [...new Map(keywords.map((keyword) => [keyword.toLowerCase(), keyword])).values()]
  const alternatives = unique.map((keyword) => {
    const before = isWordChar(keyword.charCodeAt(0)) ? String.raw`\b` : ''
    const after = isWordChar(keyword.charCodeAt(keyword.length - 1)) ? String.raw`\b` : ''
    return before + RE2JS.quote(keyword) + after
  })
  const pattern = RE2JS.compile(
    alternatives.join('|'),
    RE2JS.CASE_INSENSITIVE | RE2JS.LONGEST_MATCH,
  )
  return { pattern, group: 0, mayMatch: (text) => pattern.test(text) }
}
