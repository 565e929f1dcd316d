import { expect, test } from 'bun:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gatewayLogProblems } from '../../bench/checks.ts'

test('the bench reports warnings written once the gateway served, and its start-up notices apart', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'bench-log-'))
  try {
    const file = join(dir, 'gateway.log')
    const line = (level: string, msg: string) => JSON.stringify({ time: 'now', level, msg })
    await Bun.write(
      file,
      [
        line('warn', 'SMTP_URL is not set'),
        'API server: http://127.0.0.1:1 (clients use http://127.0.0.1:1/v1)',
        'Site server: http://127.0.0.1:2',
        line('error', 'ledger write failed'),
        line('error', 'ledger write failed'),
        'a line of another kind',
        '',
      ].join('\n'),
    )
    expect(await gatewayLogProblems(file)).toEqual({
      lines: 3,
      samples: ['error: ledger write failed (×2)', 'a line of another kind (×1)'],
      notices: ['warn: SMTP_URL is not set'],
    })
    // A gateway that never served: every line is a problem.
    await Bun.write(file, `${line('error', 'cannot start')}\n`)
    expect(await gatewayLogProblems(file)).toEqual({
      lines: 1,
      samples: ['error: cannot start (×1)'],
      notices: [],
    })
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})
