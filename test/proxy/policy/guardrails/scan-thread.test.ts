// Large texts are searched by the guardrail off the event loop: the same findings as on the request's
// thread, and a scan past its deadline refused without holding the process, the next scan served.
import { describe, expect, test } from 'bun:test'
import type { GuardrailRecord } from '../../../../proxy/core/key-record.ts'
import { guard } from '../../../../proxy/policy/guardrails/guard.ts'
import {
  ScanTimeout,
  scanInWorker,
  WORKER_ABOVE_CHARS,
} from '../../../../proxy/policy/guardrails/scan-thread.ts'

const guardrail = (filters: unknown[], id = 'grd_scan'): GuardrailRecord => ({
  id,
  version: 1,
  allowedModels: null,
  budgetNano: 0,
  filters,
})

/** Runs `guard` over `texts`, rewriting them in place as a request's body would be. */
async function guarded(record: GuardrailRecord, texts: string[]) {
  const outcome = await guard(record, (visit) => {
    texts.forEach((text, index) => {
      const replaced = visit(text)
      if (replaced !== undefined) texts[index] = replaced
    })
  })
  return { outcome, texts }
}

describe('guardrail scans of large texts', () => {
  const filler = 'lorem ipsum dolor sit amet '.repeat(Math.ceil(WORKER_ABOVE_CHARS / 27) + 10)

  test('redact and block as on the request thread, whichever text the finding is in', async () => {
    const record = guardrail([
      { detector: 'email', action: 'redact' },
      { detector: 'keywords', action: 'block', keywords: ['project zebra'] },
    ])
    const small = await guarded(record, ['write to ada@example.com', 'short'])
    const large = await guarded(record, [`${filler}write to ada@example.com`, 'short'])
    expect(small.texts[0]).toBe('write to [REDACTED:email]')
    expect(large.texts[0]).toBe(`${filler}write to [REDACTED:email]`)
    expect(large.outcome).toEqual(small.outcome)
    expect(large.outcome).toMatchObject({ ok: true, redactions: 1 })

    const blocked = await guarded(record, ['fine', `${filler} about Project Zebra`])
    expect(blocked.outcome.ok).toBe(false)
    expect(!blocked.outcome.ok && blocked.outcome.error.code).toBe('guardrail_blocked')
  })

  test('a scan past its deadline is refused while the event loop runs on; the next scan is served', async () => {
    const slow = {
      guardrailId: 'grd_slow',
      version: 1,
      filters: [{ detector: 'regex', action: 'block', pattern: 'a[ab]{500}[^ab]' }],
      texts: [Array.from({ length: 400_000 }, () => (Math.random() < 0.5 ? 'a' : 'b')).join('')],
    }
    let ticks = 0
    const ticker = setInterval(() => ticks++, 10)
    const started = performance.now()
    const refused = await scanInWorker(slow, 300).catch((error: unknown) => error)
    clearInterval(ticker)
    expect(refused).toBeInstanceOf(ScanTimeout)
    expect(performance.now() - started).toBeLessThan(2_000)
    // The event loop kept its 10 ms timer going while the worker searched.
    expect(ticks).toBeGreaterThanOrEqual(10)

    const next = await scanInWorker({
      guardrailId: 'grd_next',
      version: 1,
      filters: [{ detector: 'email', action: 'redact' }],
      texts: ['ada@example.com'],
    })
    expect(next.replaced).toEqual({ 0: '[REDACTED:email]' })
  })
})
