/**
 * The checks that turn a pattern candidate into a finding: check digits and number ranges that a
 * regular expression cannot express. They read digits in place and skip separators, so no copy is made.
 */

export function isDigit(code: number): boolean {
  return code >= 48 && code <= 57
}

/** ASCII letters, digits and `_`: the same characters as RE2's `\w`, so JS checks agree with `\b`. */
export function isWordChar(code: number): boolean {
  return isDigit(code) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95
}

export function countDigits(text: string, start: number, end: number): number {
  let count = 0
  for (let i = start; i < end; i++) if (isDigit(text.charCodeAt(i))) count++
  return count
}

/** Luhn (mod 10) over the digits of text[start, end), separators skipped. */
export function passesLuhn(text: string, start: number, end: number): boolean {
  let sum = 0
  let double = false
  for (let i = end - 1; i >= start; i--) {
    const code = text.charCodeAt(i)
    if (!isDigit(code)) continue
    let value = code - 48
    if (double) value = value > 4 ? value * 2 - 9 : value * 2
    sum += value
    double = !double
  }
  return sum % 10 === 0
}

/**
 * ISO 13616 mod-97 over an IBAN written without spaces: the first four characters move to the end,
 * letters count as 10 to 35, and the whole number must leave remainder 1. Computed piecewise so it
 * never leaves safe integers.
 */
export function passesMod97(iban: string): boolean {
  const rearranged = iban.slice(4) + iban.slice(0, 4)
  let remainder = 0
  for (let i = 0; i < rearranged.length; i++) {
    const code = rearranged.charCodeAt(i)
    if (isDigit(code)) remainder = (remainder * 10 + code - 48) % 97
    else if (code >= 65 && code <= 90) remainder = (remainder * 100 + code - 55) % 97
    else return false
  }
  return remainder === 1
}

/** SSA rules: area 000, 666 and 900-999 are never issued, nor group 00 or serial 0000. */
export function isIssuableSsn(area: number, group: number, serial: number): boolean {
  return area !== 0 && area !== 666 && area < 900 && group !== 0 && serial !== 0
}

/** Every dot-separated number in text[start, end) is at most 255. */
export function octetsInRange(text: string, start: number, end: number): boolean {
  let value = 0
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i)
    if (isDigit(code)) {
      value = value * 10 + code - 48
      if (value > 255) return false
    } else value = 0
  }
  return true
}
