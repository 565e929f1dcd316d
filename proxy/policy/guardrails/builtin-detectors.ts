/**
 * The built-in detectors. Each is an RE2 pattern that finds candidates plus a confirm step for what a
 * pattern cannot say: check digits (Luhn, mod-97), number ranges, and the right-hand boundary (RE2 has
 * no lookaround). Left boundaries are a consumed context character outside capture group 1.
 * Compiled once at module load and shared by every guardrail.
 */
import { RE2JS } from 're2js'
import {
  countDigits,
  isDigit,
  isIssuableSsn,
  isWordChar,
  octetsInRange,
  passesLuhn,
  passesMod97,
} from './checksums.ts'
import type { Detector, DetectorName, Span } from './scan.ts'

export type BuiltinDetectorName = Exclude<DetectorName, 'regex' | 'keywords'>

/** Candidate `body` as group 1, preceded by the start of the text or a character outside `[notBefore]`. */
function afterBoundary(notBefore: string, body: string, flags = 0): RE2JS {
  return RE2JS.compile(`(?:^|[^${notBefore}])(${body})`, flags)
}

function hasDigit(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (isDigit(text.charCodeAt(i))) return true
  return false
}

/** The character after a candidate does not continue it: not a word character, nor `.`/`-` then a digit. */
function endsCleanly(text: string, end: number, joiners = '.-'): boolean {
  if (end >= text.length) return true
  if (isWordChar(text.charCodeAt(end))) return false
  return !(joiners.includes(text[end]!) && isDigit(text.charCodeAt(end + 1)))
}

const email: Detector = {
  pattern: RE2JS.compile(String.raw`[\w.%+-]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}`),
  group: 0,
  mayMatch: (text) => text.includes('@') && email.pattern.test(text),
}

// International numbers start with +country code; national ones need a familiar grouping, so bare
// digit runs, dates (2024-05-01) and versions (1.2.3) are not phones. Trunk-prefixed numbers
// (020 7946 0958) only with spaces, which keeps dd-mm-yyyy dates out.
const phone: Detector = {
  pattern: afterBoundary(
    String.raw`\w+`,
    [
      String.raw`\+[1-9][0-9]{0,2}(?:[ .-]?(?:\([0-9]{1,4}\)|[0-9]{1,6})){1,6}`,
      String.raw`\([0-9]{3}\)[ .-]?[0-9]{3}[ .-][0-9]{4}`,
      String.raw`[0-9]{3}-[0-9]{3}-[0-9]{4}|[0-9]{3}\.[0-9]{3}\.[0-9]{4}|[0-9]{3} [0-9]{3} [0-9]{4}`,
      String.raw`0[0-9]{1,4}(?: [0-9]{2,8}){1,4}`,
    ].join('|'),
  ),
  group: 1,
  mayMatch: (text) => hasDigit(text) && phone.pattern.test(text),
  confirm(text, start, end) {
    const digits = countDigits(text, start, end)
    const [min, max] = text[start] === '+' ? [7, 15] : text[start] === '0' ? [9, 12] : [10, 10]
    return digits >= min && digits <= max && endsCleanly(text, end) ? [[start, end]] : []
  },
}

// A candidate is a maximal run of digit groups; the cards inside it are found by confirmCards. The
// gate (13 digits in a row, or three groups of 3 to 6) spares most texts with numbers the located search.
const cardGate = RE2JS.compile(String.raw`[0-9]{13}|[0-9]{3,6}[ -][0-9]{3,6}[ -][0-9]{3,6}`)
const creditCard: Detector = {
  pattern: afterBoundary(String.raw`\w.`, String.raw`[0-9]+(?:[ -][0-9]+)*`),
  group: 1,
  mayMatch: (text) => countDigits(text, 0, text.length) >= 13 && cardGate.test(text),
  confirm: confirmCards,
}

/**
 * Cards in a run of digit groups: 13 to 19 digits that pass Luhn, either one unbroken group or
 * groups of 3 to 6 digits (4-4-4-4, 4-6-5). Longest first at each group, so a trailing CVV or a
 * phone number before the card does not hide it.
 */
function confirmCards(text: string, start: number, end: number): Span[] {
  const groups: Span[] = []
  for (let i = start; i < end; ) {
    let j = i
    while (j < end && isDigit(text.charCodeAt(j))) j++
    groups.push([i, j])
    i = j + 1
  }
  if (!endsCleanly(text, end, '.')) groups.pop()
  const cards: Span[] = []
  for (let first = 0; first < groups.length; ) {
    const last = longestCardFrom(text, groups, first)
    if (last < 0) {
      first++
      continue
    }
    cards.push([groups[first]![0], groups[last]![1]])
    first = last + 1
  }
  return cards
}

function longestCardFrom(text: string, groups: Span[], first: number): number {
  const sizeOf = (i: number) => groups[i]![1] - groups[i]![0]
  const grouped = (i: number) => sizeOf(i) >= 3 && sizeOf(i) <= 6
  const ends: number[] = []
  let digits = 0
  for (let i = first; i < groups.length; i++) {
    if (i > first && !(grouped(first) && grouped(i))) break
    digits += sizeOf(i)
    if (digits > 19) break
    if (digits >= 13) ends.push(i)
  }
  for (let k = ends.length - 1; k >= 0; k--) {
    if (passesLuhn(text, groups[first]![0], groups[ends[k]!]![1])) return ends[k]!
  }
  return -1
}

// Country code, check digits, then up to 30 letters or digits, optionally in space-separated fours.
const iban: Detector = {
  pattern: afterBoundary(
    String.raw`\w`,
    String.raw`[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?`,
  ),
  group: 1,
  mayMatch: (text) => hasDigit(text) && iban.pattern.test(text),
  confirm(text, start, end) {
    // The pattern may have taken a following four-letter word as a group: try shorter ends too.
    for (let stop = end; stop > start; stop = text.lastIndexOf(' ', stop - 1)) {
      const compact = text.slice(start, stop).replaceAll(' ', '')
      if (
        compact.length >= 15 &&
        compact.length <= 34 &&
        passesMod97(compact) &&
        endsCleanly(text, stop, '')
      )
        return [[start, stop]]
    }
    return []
  },
}

const usSsn: Detector = {
  pattern: afterBoundary(
    String.raw`\w-`,
    String.raw`[0-9]{3}-[0-9]{2}-[0-9]{4}|[0-9]{3} [0-9]{2} [0-9]{4}`,
  ),
  group: 1,
  mayMatch: (text) => hasDigit(text) && usSsn.pattern.test(text),
  confirm(text, start, end) {
    const area = Number(text.slice(start, start + 3))
    const group = Number(text.slice(start + 4, start + 6))
    const serial = Number(text.slice(start + 7, end))
    return isIssuableSsn(area, group, serial) && endsCleanly(text, end, '-') ? [[start, end]] : []
  },
}

// IPv6 in full, `::`-compressed and IPv4-suffixed forms. Longest match, so `2001:db8::1` is not cut at `::`.
const H = '[0-9A-Fa-f]{1,4}'
const V4 = String.raw`(?:[0-9]{1,3}\.){3}[0-9]{1,3}`
const IPV6 = [
  `(?:${H}:){7}${H}`,
  `(?:${H}:){1,7}:`,
  `(?:${H}:){1,6}:${H}`,
  `(?:${H}:){1,5}(?::${H}){1,2}`,
  `(?:${H}:){1,4}(?::${H}){1,3}`,
  `(?:${H}:){1,3}(?::${H}){1,4}`,
  `(?:${H}:){1,2}(?::${H}){1,5}`,
  `${H}:(?::${H}){1,6}`,
  `:(?:(?::${H}){1,7}|:)`,
  `(?:${H}:){6}${V4}`,
  `(?:${H}:){1,4}:${V4}`,
  `::(?:[Ff]{4}(?::0{1,4})?:)?${V4}`,
]
const ipAddress: Detector = {
  pattern: afterBoundary(String.raw`\w.`, [V4, ...IPV6].join('|'), RE2JS.LONGEST_MATCH),
  group: 1,
  mayMatch: (text) => hasDigit(text) && ipAddress.pattern.test(text),
  confirm(text, start, end) {
    const colon = text.lastIndexOf(':', end - 1)
    if (colon < start)
      return octetsInRange(text, start, end) && endsCleanly(text, end, '.') ? [[start, end]] : []
    // `::`, `a::b` and the like are too common in code to count as addresses without a decimal digit.
    const v4Tail = text.lastIndexOf('.', end - 1) > colon
    const ok =
      countDigits(text, start, end) > 0 &&
      (!v4Tail || octetsInRange(text, colon + 1, end)) &&
      endsCleanly(text, end, '.:')
    return ok ? [[start, end]] : []
  },
}

const SEP = String.raw`(?:\s|\\[rn])+` // real line breaks, or `\n` escapes when the key sits inside a JSON string
const secret: Detector = {
  pattern: afterBoundary(
    String.raw`\w`,
    [
      '(?:AKIA|ASIA)[0-9A-Z]{16}', // AWS access key id
      'gh[pousr]_[A-Za-z0-9]{36,}',
      String.raw`github_pat_\w{22,}`,
      'xox[abpr]-[A-Za-z0-9-]{10,}', // Slack
      '[spr]k_live_[A-Za-z0-9]{10,}', // Stripe
      String.raw`sk-[\w-]{20,}`, // OpenAI (sk-, sk-proj-) and Anthropic (sk-ant-)
      String.raw`AIza[\w-]{35}`, // Google API key
      String.raw`eyJ[\w-]+\.eyJ[\w-]+\.[\w-]*`, // JWT
      'svc-live-[1-9A-HJ-NP-Za-km-z]{26}', // this gateway's keys
      // PEM private key: the header, and the body and footer when present. Body lines are long, so
      // prose after an unterminated header is not swallowed.
      `-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----(?:${SEP}[A-Za-z0-9+/=]{16,}|${SEP}[A-Za-z-]+: [\\w,.-]+)*` +
        `(?:(?:${SEP}[A-Za-z0-9+/=]{1,15})?${SEP}-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----)?`,
    ].join('|'),
    RE2JS.LONGEST_MATCH,
  ),
  group: 1,
  mayMatch: (text) => secret.pattern.test(text),
  confirm(text, start, end) {
    if (isWordChar(text.charCodeAt(end - 1)) && !endsCleanly(text, end, '')) return []
    // `sk-` followed by a long hyphenated word is prose or a CSS class; real keys carry digits.
    if (text.startsWith('sk-', start) && countDigits(text, start, end) === 0) return []
    return [[start, end]]
  },
}

export const BUILTIN_DETECTORS: Record<BuiltinDetectorName, Detector> = {
  email,
  phone,
  credit_card: creditCard,
  iban,
  us_ssn: usSsn,
  ip_address: ipAddress,
  secret,
}
