import { describe, expect, test } from 'bun:test'
import {
  digestsEqual,
  generateApiKey,
  hashApiKey,
  KEY_PATTERN,
} from '../../../proxy/core/api-key.ts'

describe('API keys', () => {
  test('a new key has the spec format, a 14-character prefix and its sha256', () => {
    const { key, prefix, hash } = generateApiKey()
    expect(key).toMatch(KEY_PATTERN)
    expect(key).toHaveLength(35)
    expect(prefix).toBe(key.slice(0, 14))
    expect(Buffer.from(hash).toString('hex')).toBe(
      new Bun.CryptoHasher('sha256').update(key).digest('hex'),
    )
  })

  test('keys do not repeat and use the whole base58 alphabet', () => {
    const keys = Array.from({ length: 2_000 }, () => generateApiKey().key)
    expect(new Set(keys).size).toBe(keys.length)
    const characters = new Set(keys.join('').replaceAll('svc-live-', ''))
    expect(characters.size).toBe(58)
    for (const excluded of ['0', 'O', 'I', 'l']) expect(characters.has(excluded)).toBe(false)
  })

  test('digests compare equal only when equal', () => {
    expect(digestsEqual(hashApiKey('a'), hashApiKey('a'))).toBe(true)
    expect(digestsEqual(hashApiKey('a'), hashApiKey('b'))).toBe(false)
    expect(digestsEqual(hashApiKey('a'), new Uint8Array(3))).toBe(false)
  })
})
