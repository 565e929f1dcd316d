/**
 * A PostgreSQL server of the test's own, for faults the shared one must not see: a fresh cluster
 * (initdb) in a temporary directory, served on a free loopback port by the machine's postgres binary,
 * stopped and started again by process ID. PostgreSQL refuses to run as root, so as root the server runs
 * as the `postgres` user.
 */
import { chownSync, existsSync, readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../../bench/processes.ts'

/** The machine's PostgreSQL binaries (Debian keeps them per major version). */
export const postgresBin = (() => {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const version = readdirSync(root).sort().at(-1)
  const bin = version && join(root, version, 'bin')
  return bin && existsSync(join(bin, 'initdb')) ? bin : undefined
})()

export type PostgresProcess = {
  url: string
  /** Stops the server now (fast shutdown: connections are cut). */
  stop(): Promise<void>
  /** Starts it again on the same data and port. */
  start(): Promise<void>
  /** Stops it for good and removes its data. */
  destroy(): Promise<void>
}

export async function startPostgresProcess(): Promise<PostgresProcess> {
  if (!postgresBin) throw new Error('PostgreSQL binaries are not installed')
  const dir = await mkdtemp(join(tmpdir(), 'gateway-pg-'))
  const asRoot = process.getuid?.() === 0
  if (asRoot) chownSync(dir, ...idsOf('postgres'))
  const run = (cmd: string[]) =>
    Bun.spawn(
      asRoot ? ['setpriv', '--reuid=postgres', '--regid=postgres', '--init-groups', ...cmd] : cmd,
      { stdout: 'pipe', stderr: 'pipe' },
    )
  const init = run([
    join(postgresBin, 'initdb'),
    '-D',
    join(dir, 'data'),
    '-A',
    'trust',
    '-U',
    'postgres',
  ])
  if ((await init.exited) !== 0)
    throw new Error(`initdb failed: ${await new Response(init.stderr).text()}`)
  const port = await freePort()
  let server: Bun.Subprocess | undefined
  const start = async () => {
    server = run([
      join(postgresBin, 'postgres'),
      '-D',
      join(dir, 'data'),
      '-p',
      String(port),
      '-k',
      dir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'fsync=off',
    ])
    for (let attempt = 0; attempt < 200; attempt++) {
      const ready = Bun.spawn([
        join(postgresBin, 'pg_isready'),
        '-h',
        '127.0.0.1',
        '-p',
        String(port),
      ])
      if ((await ready.exited) === 0) return
      await Bun.sleep(50)
    }
    throw new Error('the test PostgreSQL did not start')
  }
  const stop = async () => {
    if (!server || server.exitCode !== null) return
    server.kill('SIGINT')
    await server.exited
  }
  await start()
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop,
    start,
    async destroy() {
      await stop()
      await rm(dir, { recursive: true, force: true })
    },
  }
}

/** A user's uid and gid, from /etc/passwd. */
function idsOf(user: string): [number, number] {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith(`${user}:`))
  if (!line) throw new Error(`no ${user} user`)
  const fields = line.split(':')
  return [Number(fields[2]), Number(fields[3])]
}
