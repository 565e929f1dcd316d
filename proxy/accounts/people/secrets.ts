/**
 * Bearer secrets of people (dashboard links, session cookies, magic links): 32 bytes from a CSPRNG in
 * base64url, stored only as their sha256.
 */
import { hashApiKey } from '../../core/api-key.ts'

export function newSecret(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
}

/** The digest stored for a secret (the same sha256 as for API keys). */
export const hashSecret: (secret: string) => Uint8Array = hashApiKey
