// The in-flight list: cuts for shutdown and waiting until every hold has ended.
import { describe, expect, test } from 'bun:test'
import { Inflight } from '../../../proxy/pipeline/inflight.ts'

describe('Inflight', () => {
  test('cutAll calls each registered cut once and skips requests without one', () => {
    const inflight = new Inflight()
    const cuts: string[] = []
    inflight.add('a', 'acct')
    inflight.add('b', 'acct')
    inflight.setCut('a', () => cuts.push('a'))
    inflight.setCut('unknown', () => cuts.push('unknown'))
    expect(inflight.cutAll()).toBe(1)
    expect(inflight.cutAll()).toBe(0)
    expect(cuts).toEqual(['a'])
  })

  test('drained resolves true at once when nothing is open, and when the last request leaves', async () => {
    const inflight = new Inflight()
    expect(await inflight.drained(0)).toBe(true)
    inflight.add('a', 'acct')
    const waiting = inflight.drained(5_000)
    setTimeout(() => inflight.delete('a'), 20)
    expect(await waiting).toBe(true)
  })

  test('drained resolves false when the time passes first', async () => {
    const inflight = new Inflight()
    inflight.add('a', 'acct')
    const started = performance.now()
    expect(await inflight.drained(50)).toBe(false)
    expect(performance.now() - started).toBeLessThan(1_000)
  })
})
