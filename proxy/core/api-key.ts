/**
 * API keys: `svc-live-` followed by 26 base58 characters from a CSPRNG. Only the 14-character prefix
 * and the sha256 digest are ever stored; the plaintext exists once, in the creation response.
 */
import { timingSafeEqual } from 'node:crypto'

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'
export const KEY_PREFIX = 'svc-live-'
export const KEY_PATTERN = /^svc-live-[1-9A-HJ-NP-Za-km-z]{26}$/
export const STORED_PREFIX_LENGTH = 14

/** Random base58 text by rejection sampling, so every character is equally likely. */
export function randomBase58(length: number): string {
  let out = ''
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < 232 && out.length < length) out += BASE58[byte % 58]
    }
  }
  return out
}

export type NewApiKey = { key: string; prefix: string; hash: Uint8Array }

export function generateApiKey(): NewApiKey {
  const key = KEY_PREFIX + randomBase58(26)
  return { key, prefix: key.slice(0, STORED_PREFIX_LENGTH), hash: hashApiKey(key) }
}

export function hashApiKey(key: string): Uint8Array {
  return new Bun.CryptoHasher('sha256').update(key).digest() as Uint8Array
}

export function digestsEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b)
}
