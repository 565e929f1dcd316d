// `bun run start` on a port another process holds, a running gateway's included (its servers bind with
// SO_REUSEPORT, which would let a second one share the port silently): it stops with one line naming
// the port and the setting that moves it, without a stack trace. A store it cannot reach stops it naming
// the setting that points at the store, its password hidden.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  runInRepository,
  startServerProcess,
  type ServerProcess,
} from '../../helpers/server-process.ts'

let dir: string
let running: ServerProcess
const env = () => ({
  PATH: process.env.PATH!,
  HOME: process.env.HOME ?? dir,
  BUN_CONFIG_MAX_HTTP_REQUESTS: '65535',
})

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gateway-port-in-use-'))
  running = await startServerProcess({
    ...env(),
    DATA_DIR: join(dir, 'running'),
    PORT: '0',
    SITE_PORT: '0',
  })
})
afterAll(async () => {
  running?.process.kill('SIGKILL')
  await rm(dir, { recursive: true, force: true })
})

/** Starts a gateway that must refuse to start; returns its error log lines. */
async function refusedStart(settings: Record<string, string>) {
  const { code, stdout, stderr } = await runInRepository(['bun', 'proxy/main.ts'], {
    ...env(),
    DATA_DIR: join(dir, 'second'),
    ...settings,
  })
  expect(code).toBe(1)
  return `${stdout}${stderr}`
    .split('\n')
    .filter((line) => line.includes('"level":"error"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}

const advice =
  'Stop what listens there, or set PORT (API server) or SITE_PORT (site server) to a free port.'

test('a port another process holds stops the start naming the port and its setting', async () => {
  const holder = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('taken') })
  try {
    const failure = await refusedStart({ PORT: String(holder.port), SITE_PORT: '0' })
    expect(failure).toEqual([
      expect.objectContaining({
        msg: `Port ${holder.port} (PORT) is in use by another process. ${advice}`,
      }),
    ])
    expect(failure[0]!.error).toBeUndefined()
  } finally {
    await holder.stop(true)
  }
})

test('a running gateway’s site port is not shared with a second gateway', async () => {
  const sitePort = new URL(running.siteUrl).port
  const failure = await refusedStart({ PORT: '0', SITE_PORT: sitePort })
  expect(failure).toEqual([
    expect.objectContaining({
      msg: `Port ${sitePort} (SITE_PORT) is in use by another process. ${advice}`,
    }),
  ])
  // The running gateway still answers its operator API alone.
  expect((await fetch(`${running.siteUrl}/healthz`)).status).toBe(200)
})

/** A local port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const { port } = server
  server.stop(true)
  return port
}

test('a store that cannot be reached stops the start naming the setting that points at it', async () => {
  const port = await closedPort()
  const ports = { PORT: '0', SITE_PORT: '0' }
  const [redis] = await refusedStart({ ...ports, REDIS_URL: `redis://127.0.0.1:${port}` })
  expect(String(redis!.msg)).toStartWith(`REDIS_URL (redis://127.0.0.1:${port}) cannot be used: `)
  expect(String(redis!.msg)).toEndWith(
    'Check that it is running and reachable, or change REDIS_URL.',
  )
  const [database] = await refusedStart({
    ...ports,
    DATABASE_URL: `postgres://postgres:secret@127.0.0.1:${port}/postgres`,
  })
  expect(String(database!.msg)).toStartWith(
    `DATABASE_URL (postgres://postgres:***@127.0.0.1:${port}/postgres) cannot be used: `,
  )
  expect(String(database!.msg)).not.toContain('secret')
})
