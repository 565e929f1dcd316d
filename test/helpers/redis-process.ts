/**
 * A private redis-server on a free loopback port, for tests that stop, pause or kill Redis without
 * touching the shared one. Stopped by process ID.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export type RedisProcess = {
  url: string
  pid: number
  pause(): void
  resume(): void
  kill(): Promise<void>
}

export const redisServerBinary = Bun.which('redis-server')

/**
 * A new, empty redis-server; on `port` when given (a restart after a kill). A random port below the
 * kernel's ephemeral range; one another process took meanwhile (the server exits) is left for another.
 */
export async function startRedisProcess(onPort?: number): Promise<RedisProcess> {
  if (!redisServerBinary) throw new Error('redis-server is not installed')
  for (let attempt = 1; ; attempt++) {
    const started = await startOn(onPort ?? 20_000 + Math.floor(Math.random() * 12_000))
    if (started) return started
    if (onPort !== undefined || attempt === 5)
      throw new Error(`redis-server did not start (port ${onPort ?? 'random'}, ${attempt} tries)`)
  }
}

/** A redis-server on `port` once it accepts connections; undefined if it exited first (port taken). */
async function startOn(port: number): Promise<RedisProcess | undefined> {
  const dir = await mkdtemp(join(tmpdir(), 'redis-'))
  const child = Bun.spawn(
    [
      redisServerBinary!,
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
    ],
    {
      stdout: 'ignore',
      stderr: 'ignore',
    },
  )
  const url = `redis://127.0.0.1:${port}`
  const deadline = Date.now() + 10_000
  for (;;) {
    try {
      const socket = await Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {} } })
      socket.end()
      break
    } catch (error) {
      if (child.exitCode !== null) {
        await rm(dir, { recursive: true, force: true })
        return undefined
      }
      if (Date.now() > deadline) {
        child.kill('SIGKILL')
        throw error
      }
      await Bun.sleep(20)
    }
  }
  return {
    url,
    pid: child.pid,
    pause: () => process.kill(child.pid, 'SIGSTOP'),
    resume: () => process.kill(child.pid, 'SIGCONT'),
    async kill() {
      try {
        process.kill(child.pid, 'SIGCONT')
      } catch {}
      child.kill('SIGKILL')
      await child.exited
      await rm(dir, { recursive: true, force: true })
    },
  }
}
