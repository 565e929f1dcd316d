// Redis killed with SIGKILL under load and started again empty: while it is gone requests are refused
// with 502 admission_unconfirmed (never served without admission, except inside a lease taken before),
// after it is back requests are served again without an operator's action, accounts are reloaded from
// Postgres, and in the end every answered request is logged exactly once and has one ledger row (charged,
// or written off when Redis lost its hold mid-request), no balance is negative, and the ledger equals
// the balance.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Database } from '../../proxy/stores/db/database.ts'
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream/server.ts'
import {
  redisServerBinary,
  startRedisProcess,
  type RedisProcess,
} from '../helpers/redis-process.ts'
import { startServerProcess, type ServerProcess } from '../helpers/server-process.ts'
import { createTestDatabase, describeWith } from '../helpers/services.ts'

const TOKEN = 'test-operator-token'

describeWith('postgres', 'Redis killed and started again empty under load', () => {
  let redis: RedisProcess
  let db: Database
  let upstream: FakeUpstream
  let dir: string
  let server: ServerProcess

  beforeAll(async () => {
    if (!redisServerBinary) throw new Error('redis-server is needed for this test')
    redis = await startRedisProcess()
    db = await createTestDatabase()
    upstream = startFakeUpstream()
    dir = await mkdtemp(join(tmpdir(), 'gateway-redis-restart-'))
    const catalog = join(dir, 'catalog.yaml')
    await Bun.write(
      catalog,
      `providers:
  - { id: fake, style: openai, baseUrl: "${upstream.url}/v1", apiKeyEnv: FAKE_PROVIDER_KEY }
models:
  - { id: test/cheap, contextLength: 100000, maxOutputTokens: 1000, pricing: { inputPerMTok: 1, outputPerMTok: 2 }, routes: [ { provider: fake, model: fake } ] }
`,
    )
    server = await startServerProcess({
      PATH: process.env.PATH!,
      HOME: process.env.HOME ?? dir,
      DATA_DIR: dir,
      CATALOG_FILE: catalog,
      PORT: '0',
      SITE_PORT: '0',
      FAKE_PROVIDER_KEY: 'sk-fake',
      DATABASE_URL: db.location,
      REDIS_URL: redis.url,
      ADMIN_TOKEN: TOKEN,
      LOG_LEVEL: 'info',
      ACCOUNT_RPM_LIMIT: '0',
      ACCOUNT_CONCURRENCY_LIMIT: '0',
      SWEEP_INTERVAL_MS: '500',
    })
  }, 120_000)
  afterAll(async () => {
    server?.process.kill('SIGKILL')
    await server?.process.exited
    await upstream?.stop()
    await redis?.kill()
    await db?.close()
    await rm(dir, { recursive: true, force: true })
  })

  test('refused while it is gone, served again after, and the money adds up', async () => {
    const operator = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
      const response = await fetch(`${server.siteUrl}/operator/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      expect(response.status).toBeLessThan(300)
      return (await response.json()) as T
    }
    const { accountId } = await operator<{ accountId: string }>('POST', '/accounts', {
      creditNano: 1_000_000_000_000,
    })
    const { key } = await operator<{ key: string }>('POST', '/keys', {
      accountId,
      name: 'load',
      dailyLimitNano: null,
      monthlyLimitNano: null,
    })
    const answered: string[] = []
    const refusals = new Map<string, number>()
    let stop = false
    let lastServedAt = 0
    const load = Array.from({ length: 8 }, async () => {
      while (!stop) {
        const response = await fetch(`${server.apiUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            model: 'test/cheap',
            messages: [{ role: 'user', content: 'hello' }],
            max_tokens: 10,
          }),
        })
        await response.arrayBuffer()
        if (response.status === 200) {
          answered.push(response.headers.get('x-request-id')!)
          lastServedAt = Date.now()
        } else {
          const code = `${response.status} ${response.headers.get('x-service-error-code')}`
          refusals.set(code, (refusals.get(code) ?? 0) + 1)
          await Bun.sleep(20)
        }
      }
    })
    await Bun.sleep(1_000)
    const port = Number(new URL(redis.url).port)
    await redis.kill()
    await Bun.sleep(2_000)
    redis = await startRedisProcess(port)
    const restartedAt = Date.now()
    await Bun.sleep(3_000)
    stop = true
    await Promise.all(load)

    expect([...refusals.keys()].every((code) => code === '502 admission_unconfirmed')).toBe(true)
    expect(refusals.get('502 admission_unconfirmed') ?? 0).toBeGreaterThan(0)
    expect(lastServedAt).toBeGreaterThan(restartedAt)

    let state = { balanceNano: -1, ledgerBalanceNano: -2, heldNano: -1, inFlight: -1 }
    for (let attempt = 0; attempt < 150; attempt++) {
      state = await operator('GET', `/accounts/${accountId}`)
      if (
        state.balanceNano === state.ledgerBalanceNano &&
        state.heldNano === 0 &&
        state.inFlight === 0
      )
        break
      await Bun.sleep(200)
    }
    expect(state).toMatchObject({ heldNano: 0, inFlight: 0 })
    expect(state.balanceNano).toBe(state.ledgerBalanceNano)
    expect(state.balanceNano).toBeGreaterThanOrEqual(0)
    let logged: { request_id: string }[] = []
    for (let attempt = 0; attempt < 100 && logged.length < answered.length; attempt++) {
      logged = await db.sql<{ request_id: string }[]>`
        SELECT request_id FROM request_logs WHERE account_id = ${accountId} AND status = 200`
      if (logged.length < answered.length) await Bun.sleep(200)
    }
    expect(logged.map((row) => row.request_id).sort()).toEqual([...answered].sort())
    // Each answered request has its ledger row, once: a charge, or (for one running when Redis lost its
    // hold) a write-off the service absorbed.
    const rows = await db.sql<{ request_id: string; kind: string }[]>`
      SELECT request_id, kind FROM ledger
      WHERE account_id = ${accountId} AND kind IN ('charge', 'writeoff')`
    const charged = rows.filter((row) => row.kind === 'charge').map((row) => row.request_id)
    expect(new Set(charged).size).toBe(charged.length)
    expect(new Set(rows.map((row) => row.request_id))).toEqual(new Set(answered))
  }, 120_000)
})
