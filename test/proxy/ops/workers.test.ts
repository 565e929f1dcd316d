// WORKERS=2 on real stores when a worker process dies by itself: the first process says so in its log,
// scrapes go on answering at once for the processes left, and the gateway still stops cleanly.
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

  test('is logged, left out of scrapes at once, and the gateway still stops cleanly', async () => {
    expect((await scrape()).processes).toBe('2')
    const children = Bun.spawnSync(['pgrep', '-P', String(server.process.pid)]).stdout.toString()
    const workerPid = Number(children.trim().split('\n')[0])
    expect(workerPid).toBeGreaterThan(0)
    process.kill(workerPid, 'SIGKILL')

    const until = Date.now() + 10_000
    while (!errors.join('').includes('an API worker process exited') && Date.now() < until)
      await Bun.sleep(50)
    const line = errors
      .join('')
      .split('\n')
      .find((each) => each.includes('an API worker process exited'))
    expect(JSON.parse(line!)).toMatchObject({
      level: 'error',
      pid: workerPid,
      signal: 'SIGKILL',
      processes: 1,
      WORKERS: 2,
    })

    for (let i = 0; i < 3; i++) {
      const { ms, processes } = await scrape()
      expect(processes).toBe('1')
      expect(ms).toBeLessThan(900)
    }

    server.process.kill('SIGTERM')
    expect(await server.process.exited).toBe(0)
  })
})
