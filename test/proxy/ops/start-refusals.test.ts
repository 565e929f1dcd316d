// `bun run start` on a port another process holds: it stops with one line naming the port and the
// setting that moves it, without a stack trace.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { repositoryRoot } from '../../helpers/server-process.ts'

let dataDir: string
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'gateway-port-in-use-'))
})
afterAll(() => rm(dataDir, { recursive: true, force: true }))

test('a port in use stops the start naming the port and PORT or SITE_PORT', async () => {
  const holder = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('taken') })
  try {
    const child = Bun.spawn(['bun', 'proxy/main.ts'], {
      cwd: repositoryRoot,
      env: {
        PATH: process.env.PATH!,
        HOME: process.env.HOME ?? dataDir,
        BUN_CONFIG_MAX_HTTP_REQUESTS: '65535',
        DATA_DIR: dataDir,
        PORT: String(holder.port),
        SITE_PORT: '0',
      },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [stdout, stderr, code] = await Promise.all([
      new Response(child.stdout).text(),
      new Response(child.stderr).text(),
      child.exited,
    ])
    expect(code).toBe(1)
    const failure = `${stdout}${stderr}`
      .split('\n')
      .filter((line) => line.includes('"level":"error"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(failure).toHaveLength(1)
    expect(failure[0]!.msg).toBe(
      `Failed to start server. Is port ${holder.port} in use? Stop what listens there, or set PORT (API server) or SITE_PORT (site server) to a free port.`,
    )
    expect(failure[0]!.error).toBeUndefined()
  } finally {
    await holder.stop(true)
  }
})
