// `bun run start` on a port another process holds, a running gateway's included (its servers bind with
// SO_REUSEPORT, which would let a second one share the port silently): it stops with one line naming
// the port and the setting that moves it, without a stack trace. A store it cannot reach stops it naming
// the setting that points at the store, its password hidden; so does an address it cannot listen on, a
// sanctions list it cannot read, a free-chat model that is nothing free in the catalog, and a DATA_DIR
// whose embedded database a running gateway holds.
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
  // The connection's own reason, not the client's "Connection is closed".
  expect(String(redis!.msg)).toStartWith(
    `REDIS_URL (redis://127.0.0.1:${port}) cannot be used: connect ECONNREFUSED 127.0.0.1:${port}. `,
  )
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

test('an address nothing can listen on stops the start naming HOST', async () => {
  const [failure] = await refusedStart({
    PORT: '0',
    SITE_PORT: '0',
    HOST: 'not-a-host',
    PUBLIC_SITE_URL: 'https://example.com',
  })
  expect(String(failure!.msg)).toStartWith('HOST (not-a-host) cannot be listened on: ')
  expect(String(failure!.msg)).toEndWith(
    'Set HOST to an address of this machine (127.0.0.1, or 0.0.0.0 to serve other hosts).',
  )
  expect(failure!.error).toBeUndefined()
})

test('a sanctions list that cannot be read stops the start instead of screening against nothing', async () => {
  const path = join(dir, 'no-such-list.txt')
  const [failure] = await refusedStart({ PORT: '0', SITE_PORT: '0', SANCTIONS_LIST_FILE: path })
  expect(String(failure!.msg)).toStartWith(`SANCTIONS_LIST_FILE (${path}) cannot be read: `)
  expect(failure!.error).toBeUndefined()
})

test('a free-chat model that is unknown or paid stops the start naming FREE_CHAT_MODEL', async () => {
  const [unknown] = await refusedStart({
    PORT: '0',
    SITE_PORT: '0',
    FREE_CHAT_MODEL: 'nobody/nothing',
  })
  expect(unknown!.msg).toBe(
    'FREE_CHAT_MODEL: nobody/nothing is not a model or automatic choice of the catalog; free chat uses only a free model or a free automatic choice (such as service/auto:free).',
  )
  const [paid] = await refusedStart({
    PORT: '0',
    SITE_PORT: '0',
    FREE_CHAT_MODEL: 'openai/gpt-4o-mini',
  })
  expect(String(paid!.msg)).toStartWith('FREE_CHAT_MODEL: openai/gpt-4o-mini is a paid model;')
})

test('a DATA_DIR whose embedded database a running gateway holds is refused, on other ports too', async () => {
  const dataDir = join(dir, 'running')
  const [failure] = await refusedStart({ PORT: '0', SITE_PORT: '0', DATA_DIR: dataDir })
  expect(String(failure!.msg)).toStartWith(
    `DATA_DIR (${dataDir}) is in use by another gateway (process `,
  )
  expect(String(failure!.msg)).toContain('Stop that one first, or give this one another DATA_DIR')
  expect(failure!.error).toBeUndefined()
  // The running gateway keeps its database.
  expect((await fetch(`${running.siteUrl}/readyz`)).status).toBe(200)
})

test('the claim a killed gateway left on its DATA_DIR is taken over by the next start', async () => {
  const dataDir = join(dir, 'killed')
  const first = await startServerProcess({ ...env(), DATA_DIR: dataDir, PORT: '0', SITE_PORT: '0' })
  first.process.kill('SIGKILL')
  await first.process.exited
  expect(await Bun.file(join(dataDir, 'embedded.lock')).exists()).toBe(true)
  const second = await startServerProcess({
    ...env(),
    DATA_DIR: dataDir,
    PORT: '0',
    SITE_PORT: '0',
  })
  try {
    expect((await fetch(`${second.siteUrl}/readyz`)).status).toBe(200)
  } finally {
    second.process.kill('SIGKILL')
    await second.process.exited
  }
})

test('a DATA_DIR that cannot be written stops the start saying what to check', async () => {
  const file = join(dir, 'a-file')
  await Bun.write(file, 'not a directory')
  const [failure] = await refusedStart({ PORT: '0', SITE_PORT: '0', DATA_DIR: join(file, 'data') })
  expect(String(failure!.msg)).toStartWith(`DATA_DIR (${join(file, 'data')}) cannot be used: `)
  expect(String(failure!.msg)).toEndWith(
    'Check that it is a directory this process may write, or change DATA_DIR.',
  )
})
