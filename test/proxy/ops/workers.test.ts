// WORKERS=2 on real stores when a worker process dies by itself: the first process says so in its log,
// scrapes go on answering at once for the processes left, the worker is started again (after one second,
// then after twice as long when the new one dies young), and the gateway still stops cleanly.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Database } from '../../../proxy/stores/db/database.ts'
import { startServerProcess, type ServerProcess } from '../../helpers/server-process.ts'
import {
  createTestDatabase,
  deleteRedisKeys,
  describeWith,
  redisUrl,
  uniqueName,
} from '../../helpers/services.ts'

describeWith(['postgres', 'redis'], 'a worker process that dies', () => {
  let dir: string
  let db: Database
  let server: ServerProcess
  /** What the processes write on stderr: warnings and errors. */
  const errors: string[] = []
  const keyPrefix = `${uniqueName('test:')}:`

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gateway-workers-'))
    db = await createTestDatabase()
    server = await startServerProcess({
      PATH: process.env.PATH!,
      HOME: process.env.HOME ?? dir,
      DATA_DIR: dir,
      PORT: '0',
      SITE_PORT: '0',
      DATABASE_URL: db.location,
      REDIS_URL: redisUrl!,
      REDIS_KEY_PREFIX: keyPrefix,
      WORKERS: '2',
    })
    void (async () => {
      for await (const chunk of server.process.stderr) errors.push(new TextDecoder().decode(chunk))
    })()
  })
  afterAll(async () => {
    server?.process.kill('SIGKILL')
    await db?.close()
    await deleteRedisKeys(keyPrefix)
    await rm(dir, { recursive: true, force: true })
  })

  const scrape = async () => {
    const started = Date.now()
    const text = await (await fetch(`${server.apiUrl}/metrics`)).text()
    return { ms: Date.now() - started, processes: /^gateway_processes (\d+)$/m.exec(text)?.[1] }
  }

  /** The first log line (stdout or stderr) saying `text` that `accept` takes, waited for up to 15 s. */
  const logLine = async (
    text: string,
    accept: (line: { pid: number }) => boolean,
  ): Promise<Record<string, unknown> & { pid: number }> => {
    const until = Date.now() + 15_000
    const find = () =>
      [...errors, ...server.output]
        .join('')
        .split('\n')
        .filter((each) => each.includes(text))
        .map((each) => JSON.parse(each))
        .find(accept)
    while (!find() && Date.now() < until) await Bun.sleep(50)
    return find()
  }
  const alive = (pid: number) => Bun.spawnSync(['kill', '-0', String(pid)]).exitCode === 0
  /** Scrapes until both processes serve (a worker starting takes a moment), up to 10 s. */
  const bothServing = async () => {
    let serving = await scrape()
    for (let i = 0; i < 100 && serving.processes !== '2'; i++) {
      await Bun.sleep(100)
      serving = await scrape()
    }
    return serving.processes
  }

  /** The catalog reads the scrape counts, summed over their labels. */
  const catalogReads = async () => {
    const text = await (await fetch(`${server.apiUrl}/metrics`)).text()
    return [...text.matchAll(/^gateway_requests_total\{style="models"[^}]*\} (\d+)$/gm)].reduce(
      (total, [, count]) => total + Number(count),
      0,
    )
  }

  test('is logged, left out of scrapes at once, started again, and the gateway still stops cleanly', async () => {
    expect(await bothServing()).toBe('2')
    // Each on a new connection, so the kernel hands them to both processes.
    for (let i = 0; i < 40; i++)
      await fetch(`${server.apiUrl}/v1/models`, { headers: { connection: 'close' } })
    const readsBefore = await catalogReads()
    expect(readsBefore).toBe(40)
    const children = Bun.spawnSync(['pgrep', '-P', String(server.process.pid)]).stdout.toString()
    const workerPid = Number(children.trim().split('\n')[0])
    expect(workerPid).toBeGreaterThan(0)
    process.kill(workerPid, 'SIGKILL')

    expect(
      await logLine('an API worker process exited', (line) => line.pid === workerPid),
    ).toMatchObject({
      level: 'error',
      pid: workerPid,
      signal: 'SIGKILL',
      processes: 1,
      WORKERS: 2,
      restartInMs: 1000,
    })
    const { ms, processes } = await scrape()
    expect(processes).toBe('1')
    expect(ms).toBeLessThan(900)
    // What the dead worker had counted stays in the sum: no counter goes down.
    expect(await catalogReads()).toBe(readsBefore)

    const restarted = await logLine('an API worker process started again', () => true)
    expect(restarted).toMatchObject({ level: 'info', processes: 2 })
    expect(restarted.pid).not.toBe(workerPid)
    expect(alive(restarted.pid)).toBe(true)
    expect(await bothServing()).toBe('2')

    // Dying young, the replacement waits twice as long before it is started again.
    process.kill(restarted.pid, 'SIGKILL')
    expect(
      await logLine('an API worker process exited', (line) => line.pid === restarted.pid),
    ).toMatchObject({
      pid: restarted.pid,
      restartInMs: 2000,
    })
    const again = await logLine(
      'an API worker process started again',
      (line) => line.pid !== restarted.pid,
    )
    expect(again.pid).toBeGreaterThan(0)

    server.process.kill('SIGTERM')
    expect(await server.process.exited).toBe(0)
    await Bun.sleep(200)
    expect(alive(again.pid)).toBe(false)
  })
})
