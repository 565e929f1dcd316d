// PostgreSQL stopped for ten seconds under load, on a PostgreSQL the test runs itself: requests with
// known keys go on (the hot path reads no Postgres), the ledger and request-log rows wait and are written
// once it is back, and afterwards every answered request is in the request log exactly once, charged
// once, and the ledger equals the balance, with no operator action.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream/server.ts'
import {
  postgresBin,
  startPostgresProcess,
  type PostgresProcess,
} from '../helpers/postgres-process.ts'
import { startServerProcess, type ServerProcess } from '../helpers/server-process.ts'
import { deleteRedisKeys, describeWith, redisUrl, uniqueName } from '../helpers/services.ts'
import postgres from 'postgres'

const TOKEN = 'test-operator-token'

describeWith('redis', 'PostgreSQL stopped for ten seconds under load', () => {
  let pg: PostgresProcess
  let upstream: FakeUpstream
  let dir: string
  let server: ServerProcess
  const keyPrefix = `${uniqueName('test:')}:`

  beforeAll(async () => {
    if (!postgresBin) throw new Error('PostgreSQL binaries are needed for this test')
    pg = await startPostgresProcess()
    upstream = startFakeUpstream()
    dir = await mkdtemp(join(tmpdir(), 'gateway-pg-outage-'))
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
      DATABASE_URL: pg.url,
      REDIS_URL: redisUrl!,
      REDIS_KEY_PREFIX: keyPrefix,
      ADMIN_TOKEN: TOKEN,
      LOG_LEVEL: 'info',
      ACCOUNT_RPM_LIMIT: '0',
      ACCOUNT_CONCURRENCY_LIMIT: '0',
    })
  }, 120_000)
  afterAll(async () => {
    server?.process.kill('SIGKILL')
    await server?.process.exited
    await upstream?.stop()
    await pg?.destroy()
    await deleteRedisKeys(keyPrefix)
    await rm(dir, { recursive: true, force: true })
  })

  test('requests go on, rows catch up, each answered request is logged and charged once', async () => {
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
    let failed = 0
    let stop = false
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
        if (response.status === 200) answered.push(response.headers.get('x-request-id')!)
        else failed += 1
        await Bun.sleep(5)
      }
    })
    await Bun.sleep(1_000)
    await pg.stop()
    const duringFrom = answered.length
    await Bun.sleep(10_000)
    const during = answered.length - duringFrom
    await pg.start()
    await Bun.sleep(1_500)
    stop = true
    await Promise.all(load)
    expect(during).toBeGreaterThan(100)
    expect(failed).toBe(0)

    // Once Postgres is back the queued rows are written; the account settles with no action.
    const sql = postgres(pg.url, { max: 1, onnotice: () => {} })
    try {
      let state = { balanceNano: 0, ledgerBalanceNano: -1, heldNano: -1 }
      for (let attempt = 0; attempt < 100; attempt++) {
        state = await operator('GET', `/accounts/${accountId}`)
        if (state.balanceNano === state.ledgerBalanceNano && state.heldNano === 0) break
        await Bun.sleep(200)
      }
      expect(state.balanceNano).toBe(state.ledgerBalanceNano)
      expect(state.heldNano).toBe(0)
      // Request-log rows follow the ledger's in the same flush.
      let logged: { request_id: string }[] = []
      for (let attempt = 0; attempt < 100 && logged.length < answered.length; attempt++) {
        logged = await sql<{ request_id: string }[]>`
          SELECT request_id FROM request_logs WHERE account_id = ${accountId} AND status = 200`
        if (logged.length < answered.length) await Bun.sleep(200)
      }
      expect(logged.map((row) => row.request_id).sort()).toEqual([...answered].sort())
      const charges = await sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM ledger WHERE account_id = ${accountId} AND kind = 'charge'`
      expect(charges[0]!.n).toBe(answered.length)
    } finally {
      await sql.end()
    }
  }, 120_000)
})
