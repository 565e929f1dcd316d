// A card payment's completion reaches a gateway process that is killed with SIGKILL while it handles
// the deliveries: Stripe sends the event again (it got no answer), a new process takes it, and the
// payment is credited exactly once, with the ledger equal to the balance, wherever the kill landed.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { confirmSecrets } from '../../../../proxy/accounts/people/accountless.ts'
import { openSession, SESSION_COOKIE } from '../../../../proxy/accounts/people/sessions.ts'
import type { Database } from '../../../../proxy/stores/db/database.ts'
import { startServerProcess, type ServerProcess } from '../../../helpers/server-process.ts'
import {
  createTestDatabase,
  deleteRedisKeys,
  describeWith,
  redisUrl,
  uniqueName,
} from '../../../helpers/services.ts'
import { completedSession, signedEvent, stripeStandIn } from '../../../helpers/stripe.ts'

const SECRET = 'whsec_kill_test'
const TOKEN = 'test-operator-token'
const USD = 1_000_000_000

describeWith(['postgres', 'redis'], 'a gateway killed while a card payment arrives', () => {
  let dir: string
  let db: Database
  let env: Record<string, string>
  let standIn: ReturnType<typeof stripeStandIn>
  const servers: ServerProcess[] = []
  const keyPrefix = `${uniqueName('test:')}:`

  beforeAll(async () => {
    standIn = stripeStandIn()
    dir = await mkdtemp(join(tmpdir(), 'gateway-payment-kill-'))
    db = await createTestDatabase()
    env = {
      PATH: process.env.PATH!,
      HOME: process.env.HOME ?? dir,
      DATA_DIR: dir,
      PORT: '0',
      SITE_PORT: '0',
      DATABASE_URL: db.location,
      REDIS_URL: redisUrl!,
      REDIS_KEY_PREFIX: keyPrefix,
      ADMIN_TOKEN: TOKEN,
      LOG_LEVEL: 'info',
      SWEEP_INTERVAL_MS: '200',
      STRIPE_SECRET_KEY: 'sk_test_gateway',
      STRIPE_WEBHOOK_SECRET: SECRET,
      STRIPE_API_URL: standIn.url,
    }
  })
  afterAll(async () => {
    for (const server of servers) server.process.kill('SIGKILL')
    await Promise.all(servers.map((server) => server.process.exited))
    standIn.server.stop(true)
    await db?.close()
    await deleteRedisKeys(keyPrefix)
    await rm(dir, { recursive: true, force: true })
  })

  async function start(): Promise<ServerProcess> {
    const server = await startServerProcess(env)
    servers.push(server)
    return server
  }
  const deliver = (server: ServerProcess, body: { payload: string; signature: string }) =>
    fetch(`${server.siteUrl}/webhooks/stripe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': body.signature },
      body: body.payload,
    })

  test('killed with SIGKILL during the deliveries, then restarted: credited exactly once', async () => {
    let server = await start()
    const operator = (path: string, init: RequestInit = {}) =>
      fetch(`${server.siteUrl}/operator/v1${path}`, {
        ...init,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      })
    const { accountId } = (await (
      await operator('/accounts', { method: 'POST', body: '{}' })
    ).json()) as { accountId: string }
    await confirmSecrets(db.sql, accountId, Date.now())
    const { token } = await openSession(db.sql, { accountId, userId: null }, 3_600_000, Date.now())
    const topUp = await fetch(`${server.siteUrl}/admin/v1/billing/top-up`, {
      method: 'POST',
      headers: {
        cookie: `${SESSION_COOKIE}=${token}`,
        origin: server.siteUrl,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ amountNano: 40 * USD }),
    })
    expect(topUp.status).toBe(200)
    const { url } = (await topUp.json()) as { url: string }
    const event = await signedEvent(
      completedSession(url.split('/pay/')[1]!, 'pi_killed', 4000),
      SECRET,
    )

    // Deliveries in flight when the process dies: some may have been answered, some not.
    const inFlight = Array.from({ length: 20 }, () => deliver(server, event).catch(() => null))
    await Bun.sleep(5)
    server.process.kill('SIGKILL')
    await server.process.exited
    await Promise.all(inFlight)

    // Stripe retries what was not answered; a new process takes it.
    server = await start()
    const retried = await deliver(server, event)
    expect(retried.status).toBe(200)
    let state = { balanceNano: -1, ledgerBalanceNano: -2 }
    for (let attempt = 0; attempt < 50; attempt++) {
      state = (await (await operator(`/accounts/${accountId}`)).json()) as typeof state
      if (state.balanceNano === 40 * USD && state.ledgerBalanceNano === 40 * USD) break
      await Bun.sleep(100)
    }
    expect(state).toMatchObject({ balanceNano: 40 * USD, ledgerBalanceNano: 40 * USD })
    const credits = await db.sql`
      SELECT 1 FROM ledger WHERE account_id = ${accountId} AND kind = 'credit'`
    expect(credits).toHaveLength(1)
    const [payment] = await db.sql<{ state: string }[]>`
      SELECT state FROM payments WHERE account_id = ${accountId}`
    expect(payment).toEqual({ state: 'credited' })
  }, 60_000)
})
