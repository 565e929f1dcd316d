// Four gateway processes sharing one Postgres, as several hosts (or WORKERS) run them, each with its
// admission leases, on a single Redis and on a three-master Redis Cluster: nothing is admitted past the
// balance, a key's limits hold across them, a revoked key is refused everywhere within a second, and
// when one process is killed with SIGKILL in the middle of the load its leases expire, every hold ends
// and the balance equals what was charged, request by request.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Database } from '../../../proxy/stores/db/database.ts'
import { redisKeys } from '../../../proxy/stores/admission/redis-keys.ts'
import { connectRedis } from '../../../proxy/stores/redis-client.ts'
import { startRedisCluster, type RedisCluster } from '../../helpers/redis-cluster.ts'
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream/server.ts'
import { startServerProcess, type ServerProcess } from '../../helpers/server-process.ts'
import {
  createTestDatabase,
  deleteRedisKeys,
  describeWith,
  redisUrl,
  uniqueName,
} from '../../helpers/services.ts'

const TOKEN = 'test-operator-token'
const PROCESSES = 4

type AccountState = {
  balanceNano: number
  heldNano: number
  inFlight: number
  ledgerBalanceNano: number
}

function scaleOut(name: string, target: 'redis' | 'cluster') {
  describeWith(['postgres', 'redis'], name, () => {
    let cluster: RedisCluster | undefined
    let url: string
    let upstream: FakeUpstream
    let dir: string
    let db: Database
    let servers: ServerProcess[]
    /** One more gateway, started with WORKERS=2 (two processes on one port). */
    let pair: ServerProcess
    const keyPrefix = `${uniqueName('test:')}:`

    beforeAll(async () => {
      if (target === 'cluster') cluster = await startRedisCluster()
      url = cluster?.url ?? redisUrl!
      upstream = startFakeUpstream()
      dir = await mkdtemp(join(tmpdir(), 'gateway-processes-'))
      db = await createTestDatabase()
      const catalog = join(dir, 'catalog.yaml')
      const model = (id: string, upstreamModel: string) =>
        `  - { id: ${id}, contextLength: 100000, maxOutputTokens: 1000, pricing: { inputPerMTok: 1, outputPerMTok: 2 }, routes: [ { provider: fake, model: "${upstreamModel}" } ] }`
      await Bun.write(
        catalog,
        [
          'providers:',
          `  - { id: fake, style: openai, baseUrl: "${upstream.url}/v1", apiKeyEnv: FAKE_PROVIDER_KEY }`,
          'models:',
          model('test/cheap', 'fake'),
          // Slow enough that a burst is decided in full while its first admitted requests still run (a
          // settle would free the rest of their holds), even when the machine is busy.
          model('test/slow', 'fake?delay=5000'),
          '',
        ].join('\n'),
      )
      const env = {
        PATH: process.env.PATH!,
        HOME: process.env.HOME ?? dir,
        DATA_DIR: dir,
        CATALOG_FILE: catalog,
        PORT: '0',
        SITE_PORT: '0',
        FAKE_PROVIDER_KEY: 'sk-fake',
        DATABASE_URL: db.location,
        REDIS_URL: url,
        REDIS_KEY_PREFIX: keyPrefix,
        ADMIN_TOKEN: TOKEN,
        LOG_LEVEL: 'info',
        ACCOUNT_CONCURRENCY_LIMIT: '0',
        ACCOUNT_RPM_LIMIT: '0',
        ADMISSION_LEASE_TTL_MS: '1000',
        // A request a process admitted outside its leases holds until the hold deadline once that
        // process is killed (twenty minutes by default): short here, so the kill test sees it end.
        HOLD_DEADLINE_MS: '4000',
        SWEEP_INTERVAL_MS: '200',
        // What is checked here is how many are admitted, not the deadline of a store call: on a busy
        // machine a burst of 500 may take Redis longer than the default 300 ms to decide.
        ADMISSION_TIMEOUT_MS: '3000',
      }
      servers = await Promise.all(Array.from({ length: PROCESSES }, () => startServerProcess(env)))
      pair = await startServerProcess({ ...env, WORKERS: '2' })
    })
    afterAll(async () => {
      pair?.process.kill('SIGTERM')
      await pair?.process.exited
      for (const server of servers ?? []) server.process.kill('SIGKILL')
      await Promise.all((servers ?? []).map((server) => server.process.exited))
      await upstream?.stop()
      await db?.close()
      if (cluster) await cluster.stop()
      else await deleteRedisKeys(keyPrefix)
      await rm(dir, { recursive: true, force: true })
    })

    async function operator<T>(method: string, path: string, body?: unknown): Promise<T> {
      const response = await fetch(`${servers[0]!.siteUrl}/operator/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      expect(response.status).toBeLessThan(300)
      return (await response.json()) as T
    }
    async function funded(
      creditNano: number,
      limits: { rpmLimit?: number; concurrency?: number } = {},
    ): Promise<{ accountId: string; key: string }> {
      const { accountId } = await operator<{ accountId: string }>('POST', '/accounts', {
        creditNano,
      })
      const { key } = await operator<{ key: string }>('POST', '/keys', {
        accountId,
        name: 'load',
        dailyLimitNano: null,
        monthlyLimitNano: null,
        ...limits,
      })
      return { accountId, key }
    }
    const body = (model: string) => ({
      model,
      messages: [{ role: 'user', content: 'hello' }],
      max_tokens: 10,
    })
    const chat = (server: ServerProcess, key: string, model: string) =>
      fetch(`${server.apiUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body(model)),
      })
    /** Waits until no hold is open and Postgres has caught up with the live balance. */
    async function quiet(accountId: string, timeoutMs = 15_000): Promise<AccountState> {
      const until = Date.now() + timeoutMs
      for (;;) {
        const state = await operator<AccountState>('GET', `/accounts/${accountId}`)
        const done = state.heldNano === 0 && state.inFlight === 0
        if ((done && state.balanceNano === state.ledgerBalanceNano) || Date.now() > until)
          return state
        await Bun.sleep(100)
      }
    }

    test('near the end of the balance, exactly what it affords is admitted across the processes', async () => {
      // The hold of this body on these prices: (bytes + 8 per message) × 1,000 + max_tokens × 2,000 nano.
      const hold = (JSON.stringify(body('test/slow')).length + 8) * 1_000 + 10 * 2_000
      const { accountId, key } = await funded(100 * hold)
      const responses = await Promise.all(
        Array.from({ length: 500 }, (_, i) => chat(servers[i % PROCESSES]!, key, 'test/slow')),
      )
      const statuses = responses.map((response) => response.status)
      expect(statuses.filter((status) => status === 200)).toHaveLength(100)
      expect(statuses.filter((status) => status === 402)).toHaveLength(400)
      await Promise.all(responses.map((response) => response.arrayBuffer()))
      const state = await quiet(accountId)
      expect(state).toMatchObject({ heldNano: 0, inFlight: 0 })
      expect(state.balanceNano).toBe(state.ledgerBalanceNano)
      expect(state.balanceNano).toBeGreaterThanOrEqual(0)
    })

    test("a key's requests per minute and concurrency across the processes: never more than its limit", async () => {
      const rpm = await funded(1_000_000_000_000, { rpmLimit: 30 })
      const byMinute = await Promise.all(
        Array.from({ length: 200 }, (_, i) => chat(servers[i % PROCESSES]!, rpm.key, 'test/cheap')),
      )
      expect(byMinute.filter((response) => response.status === 200)).toHaveLength(30)
      expect(byMinute.filter((response) => response.status === 429)).toHaveLength(170)

      const slots = await funded(1_000_000_000_000, { concurrency: 5 })
      const atOnce = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          chat(servers[i % PROCESSES]!, slots.key, 'test/slow'),
        ),
      )
      expect(atOnce.filter((response) => response.status === 200)).toHaveLength(5)
      expect(atOnce.filter((response) => response.status === 429)).toHaveLength(95)
      await Promise.all([...byMinute, ...atOnce].map((response) => response.arrayBuffer()))
    })

    test('one process killed with SIGKILL under load: its leases expire, every hold ends, the balance is what was charged', async () => {
      const credit = 1_000_000_000_000
      const { accountId, key } = await funded(credit)
      const victim = servers[PROCESSES - 1]!
      let stop = false
      const load = servers.map(async (server) => {
        let answered = 0
        await Promise.all(
          Array.from({ length: 8 }, async () => {
            while (!stop) {
              try {
                const response = await chat(server, key, 'test/cheap')
                await response.arrayBuffer()
                if (response.ok) answered += 1
              } catch {
                if (server === victim) return // its connections end with it
                throw new Error('a surviving process failed a request')
              }
            }
          }),
        )
        return answered
      })
      await Bun.sleep(700)
      // The processes admit inside leases: their slots outnumber the 32 requests that can be running.
      const loaded = await operator<AccountState>('GET', `/accounts/${accountId}`)
      expect(loaded.inFlight).toBeGreaterThan(32)
      victim.process.kill('SIGKILL')
      await victim.process.exited
      await Bun.sleep(500)
      stop = true
      const answered = await Promise.all(load)
      expect(answered.every((count) => count > 0)).toBe(true)

      // Holds end (the victim's leases and its requests admitted outside them at their deadlines); the
      // survivors give theirs back once idle.
      const state = await quiet(accountId)
      expect(state).toMatchObject({ heldNano: 0, inFlight: 0 })
      // Every charge is in Postgres or, for the victim's last ones, still in the outbox (Postgres gets
      // those a minute later): together they are exactly what left the balance.
      const charged = new Map<string, number>()
      for (const row of await db.sql<{ request_id: string; amount_nano: number }[]>`
      SELECT request_id, amount_nano FROM ledger WHERE account_id = ${accountId} AND kind = 'charge'`)
        charged.set(row.request_id, -row.amount_nano)
      const redis = connectRedis(url, { keyPrefix })
      const outbox = await redis.hgetall(redisKeys.outbox(accountId))
      await redis.quit()
      for (const [requestId, entry] of Object.entries(outbox))
        charged.set(requestId, Number(entry.split('|')[1]))
      const total = [...charged.values()].reduce((sum, value) => sum + value, 0)
      expect(total).toBeGreaterThan(0)
      expect(state.balanceNano).toBe(credit - total)
    }, 60_000)

    test('a key revoked through one process is refused by every process within a second', async () => {
      const { accountId, key } = await funded(1_000_000_000_000)
      // The processes still running (the test above may have killed one).
      const running = servers.filter(
        (server) => server.process.exitCode === null && !server.process.signalCode,
      )
      expect(running.length).toBeGreaterThanOrEqual(PROCESSES - 1)
      for (const server of running) expect((await chat(server, key, 'test/cheap')).status).toBe(200)
      const [row] = await db.sql<{ id: string }[]>`
      SELECT id FROM api_keys WHERE account_id = ${accountId}`
      await operator('POST', `/keys/${row!.id}/revoke`)
      const revokedAt = Date.now()
      const refusedAfter = await Promise.all(
        running.map(async (server) => {
          for (;;) {
            const response = await chat(server, key, 'test/cheap')
            await response.arrayBuffer()
            if (response.status === 401) return Date.now() - revokedAt
            if (Date.now() - revokedAt > 5_000) return Number.POSITIVE_INFINITY
            await Bun.sleep(20)
          }
        }),
      )
      expect(Math.max(...refusedAfter)).toBeLessThan(1_000)
    })

    test('with WORKERS=2 every scrape of the shared port answers the sum over both processes', async () => {
      // Started with PORT=0: the worker listens on the port the first process picked.
      const port = Number(new URL(pair.apiUrl).port)
      const until = Date.now() + 10_000
      while ((await listenersOn(port)) < 2 && Date.now() < until) await Bun.sleep(50)
      expect(await listenersOn(port)).toBeGreaterThanOrEqual(2)
      const { key } = await funded(1_000_000_000_000)
      const answers = await Promise.all(
        Array.from({ length: 40 }, () => chat(pair, key, 'test/cheap')),
      )
      expect(answers.every((response) => response.ok)).toBe(true)
      await Promise.all(answers.map((response) => response.arrayBuffer()))
      // A new connection each time, so the kernel may hand it to either process.
      const scrape = async () => {
        const response = await fetch(`${pair.apiUrl}/metrics`, { headers: { connection: 'close' } })
        const text = await response.text()
        const line = text
          .split('\n')
          .find(
            (each) =>
              each.startsWith('gateway_requests_total{') &&
              each.includes('model="test/cheap"') &&
              each.includes('status="200"'),
          )
        return { text, count: line?.split(' ').at(-1) }
      }
      // A request is counted once it is settled, which may be a moment after its answer was read.
      const counted = Date.now() + 3_000
      while ((await scrape()).count !== '40' && Date.now() < counted) await Bun.sleep(50)
      for (let each = 0; each < 8; each++) {
        const { text, count } = await scrape()
        expect(count).toBe('40')
        expect(text).not.toContain('pid="')
        expect(text).toContain('\ngateway_processes 2\n')
      }
    })
  })
}

/** Sockets listening on a local TCP port over IPv4 (Linux /proc/net/tcp: state 0A is LISTEN). */
async function listenersOn(port: number): Promise<number> {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, '0')}`
  const table = await readFile('/proc/net/tcp', 'utf8')
  return table.split('\n').filter((line) => {
    const fields = line.trim().split(/\s+/)
    return fields[1]?.endsWith(hex) && fields[3] === '0A'
  }).length
}

scaleOut('four gateway processes on one Redis and one Postgres', 'redis')
scaleOut('four gateway processes on a three-master Redis Cluster and one Postgres', 'cluster')
