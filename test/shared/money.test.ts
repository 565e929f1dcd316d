import { describe, expect, test } from 'bun:test'
import { nanoToUsd, usdToNano } from '../../shared/money.ts'

describe('money', () => {
  test('decimal USD converts to integer nano exactly', () => {
    expect(usdToNano('12.5')).toBe(12_500_000_000)
    expect(usdToNano('0.000000001')).toBe(1)
    expect(usdToNano(0.0375)).toBe(37_500_000)
    expect(usdToNano(0.1 + 0.2)).toBeUndefined() // 0.30000000000000004 has more than nine decimals
    expect(usdToNano('1.0000000001')).toBeUndefined()
    expect(usdToNano('-1')).toBeUndefined()
    expect(usdToNano('abc')).toBeUndefined()
    expect(usdToNano('10000000')).toBeUndefined() // above 2^53 nano
  })

  test('nano formats as USD without trailing zeros', () => {
    expect(nanoToUsd(0)).toBe('0')
    expect(nanoToUsd(19_000)).toBe('0.000019')
    expect(nanoToUsd(12_500_000_000)).toBe('12.5')
    expect(nanoToUsd(-1_500_000_000)).toBe('-1.5')
    expect(nanoToUsd(1)).toBe('0.000000001')
  })
})
