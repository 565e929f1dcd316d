import { expect, test } from 'bun:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gatewayLogProblems } from '../../bench/checks.ts'

test('the bench reports warnings written once the gateway served, and its start-up notices apart', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'bench-log-'))
  try {
    const file = join(dir, 'gateway.log')
    const line = (level: string, msg: string) => `${JSON.stringify({ time: 'now', level, msg })}\n`
    const startup =
      line('warn', 'SMTP_URL is not set – mail goes to a file') + line('info', 'API server')
    await Bun.write(
      file,
      startup +
        line('error', 'ledger write failed') +
        line('error', 'ledger write failed') +
        line('info', 'draining') +
        'a line of another kind\n',
    )
    expect(await gatewayLogProblems(file, Buffer.byteLength(startup))).toEqual({
      lines: 3,
      samples: ['error: ledger write failed (×2)', 'a line of another kind (×1)'],
      notices: ['warn: SMTP_URL is not set – mail goes to a file'],
    })
    // Without the start-up's length, every warning is a problem.
    expect((await gatewayLogProblems(file)).lines).toBe(4)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})
