/**
 * What the fault cases share: a gateway process on the stores a case gives it, with a fake provider and
 * a one-model catalog; a funded account and key through the operator API; steady load from eight
 * clients that records what was answered and what was refused; and the checks once the system is
 * healthy again (holds ended, ledger equal to the balance, every answered request logged once).
 */
import { expect } from 'bun:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Sql } from 'postgres'
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream/server.ts'
import { startServerProcess, type ServerProcess } from '../helpers/server-process.ts'

const TOKEN = 'test-operator-token'

export type FaultGateway = {
  /** The running process (a new one after `restart`). */
  server: ServerProcess
  upstream: FakeUpstream
  operator<T>(method: string, path: string, body?: unknown): Promise<T>
  /** Kills the process with SIGKILL (in the middle of whatever it does) and starts it again on the same settings. */
  restart(): Promise<void>
  close(): Promise<void>
}

/**
 * A gateway process on `stores` (DATABASE_URL, REDIS_URL, other settings), serving from a fake provider
 * `test/cheap` (five tokens at once), `test/stream` (200 tokens, one every 50 ms when streamed) and
 * `models` (model id -> the fake provider's model, which says how it behaves: fake-upstream/plan.ts).
 */
export async function startFaultGateway(
  stores: Record<string, string>,
  models: Record<string, string> = {},
): Promise<FaultGateway> {
  const upstream: FakeUpstream = startFakeUpstream()
  const dir = await mkdtemp(join(tmpdir(), 'gateway-fault-'))
  const catalog = join(dir, 'catalog.yaml')
  await Bun.write(
    catalog,
    `providers:
  - { id: fake, style: openai, baseUrl: "${upstream.url}/v1", apiKeyEnv: FAKE_PROVIDER_KEY }
models:
${Object.entries({
  'test/cheap': 'fake',
  'test/stream': 'fake?tokens=200&chunkDelay=50',
  ...models,
})
  .map(
    ([id, model]) =>
      `  - { id: ${id}, contextLength: 100000, maxOutputTokens: 1000, pricing: { inputPerMTok: 1, outputPerMTok: 2 }, routes: [ { provider: fake, model: "${model}" } ] }`,
  )
  .join('\n')}
`,
  )
  const env = {
    PATH: process.env.PATH!,
    HOME: process.env.HOME ?? dir,
    DATA_DIR: dir,
    CATALOG_FILE: catalog,
    PORT: '0',
    SITE_PORT: '0',
    FAKE_PROVIDER_KEY: 'sk-fake',
    ADMIN_TOKEN: TOKEN,
    LOG_LEVEL: 'info',
    ACCOUNT_RPM_LIMIT: '0',
    ACCOUNT_CONCURRENCY_LIMIT: '0',
    ...stores,
  }
  const gateway: FaultGateway = {
    server: await startServerProcess(env),
    upstream,
    async operator<T>(method: string, path: string, body?: unknown): Promise<T> {
      const response = await fetch(`${gateway.server.siteUrl}/operator/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      expect(response.status).toBeLessThan(300)
      return (await response.json()) as T
    },
    async restart() {
      gateway.server.process.kill('SIGKILL')
      await gateway.server.process.exited
      gateway.server = await startServerProcess(env)
    },
    async close() {
      gateway.server.process.kill('SIGKILL')
      await gateway.server.process.exited
      await upstream.stop()
      await rm(dir, { recursive: true, force: true })
    },
  }
  return gateway
}

/** A new account with USD 1,000 and a key without caps. */
export async function fundedKey(
  gateway: FaultGateway,
): Promise<{ accountId: string; key: string }> {
  const { accountId } = await gateway.operator<{ accountId: string }>('POST', '/accounts', {
    creditNano: 1_000_000_000_000,
  })
  const { key } = await gateway.operator<{ key: string }>('POST', '/keys', {
    accountId,
    name: 'load',
    dailyLimitNano: null,
    monthlyLimitNano: null,
  })
  return { accountId, key }
}

/**
 * Eight clients sending requests one after another until `stop()` (to the process running at the time);
 * what they got, by request: answered (200, with when), refused (status and code), or the connection
 * lost ("connection lost").
 */
export function startLoad(gateway: FaultGateway, key: string) {
  const answered: string[] = []
  const answeredAt = new Map<string, number>()
  const refusals = new Map<string, number>()
  const refuse = (code: string) => refusals.set(code, (refusals.get(code) ?? 0) + 1)
  let lastServedAt = 0
  let stopped = false
  const clients = Array.from({ length: 8 }, async () => {
    while (!stopped) {
      try {
        const response = await fetch(`${gateway.server.apiUrl}/v1/chat/completions`, {
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
          const requestId = response.headers.get('x-request-id')!
          answered.push(requestId)
          lastServedAt = Date.now()
          answeredAt.set(requestId, lastServedAt)
          continue
        }
        refuse(`${response.status} ${response.headers.get('x-service-error-code')}`)
      } catch {
        refuse('connection lost')
      }
      await Bun.sleep(20)
    }
  })
  return {
    answered,
    answeredAt,
    refusals,
    lastServedAt: () => lastServedAt,
    async stop() {
      stopped = true
      await Promise.all(clients)
    },
  }
}

/**
 * The checks once the system is healthy again: every hold ended, the ledger equals the balance and is
 * not negative, every answered request is in the request log exactly once, and every charge is of a
 * logged request. `uncertain` requests (answered as a process was killed, or whose client left) may be
 * logged or not, once.
 * Returns the account's ledger rows of charges and write-offs, for the case's own checks.
 */
export async function expectSettled(
  gateway: FaultGateway,
  sql: Sql,
  accountId: string,
  answered: string[],
  uncertain: (requestId: string) => boolean = () => false,
): Promise<{ request_id: string; kind: string }[]> {
  let state = { balanceNano: -1, ledgerBalanceNano: -2, heldNano: -1, inFlight: -1 }
  for (let attempt = 0; attempt < 150; attempt++) {
    // A read may fail while the system recovers (a pooled connection the outage broke): read again.
    const response = await fetch(`${gateway.server.siteUrl}/operator/v1/accounts/${accountId}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    })
    if (response.ok) state = (await response.json()) as typeof state
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
  // Request-log rows follow the ledger's in the same flush.
  let logged: { request_id: string; status: number }[] = []
  const answeredLogged = () => logged.filter((row) => row.status === 200)
  for (let attempt = 0; attempt < 100 && answeredLogged().length < answered.length; attempt++) {
    logged = await sql<{ request_id: string; status: number }[]>`
      SELECT request_id, status FROM request_logs WHERE account_id = ${accountId}`
    if (answeredLogged().length < answered.length) await Bun.sleep(200)
  }
  const loggedIds = new Set(logged.map((row) => row.request_id))
  expect(loggedIds.size).toBe(logged.length)
  expect(
    answeredLogged()
      .map((row) => row.request_id)
      .filter((requestId) => !uncertain(requestId))
      .sort(),
  ).toEqual([...answered].sort())
  // A process killed between writing a charge and its log row leaves the row to the outbox's recovery
  // (another process's maintenance, once the entry is older than ten seconds).
  let rows: { request_id: string; kind: string }[] = []
  let unlogged: typeof rows = []
  for (let attempt = 0; attempt < 150; attempt++) {
    rows = await sql<{ request_id: string; kind: string }[]>`
      SELECT request_id, kind FROM ledger WHERE account_id = ${accountId} AND kind IN ('charge', 'writeoff')`
    const all = await sql<{ request_id: string }[]>`
      SELECT request_id FROM request_logs WHERE account_id = ${accountId}`
    const everLogged = new Set(all.map((row) => row.request_id))
    unlogged = rows.filter((row) => row.kind === 'charge' && !everLogged.has(row.request_id))
    if (unlogged.length === 0) break
    await Bun.sleep(200)
  }
  expect(unlogged).toEqual([])
  return rows
}
