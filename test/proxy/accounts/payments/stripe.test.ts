// Card top-ups through Stripe Checkout: the owner starts one within the bounds; Stripe's webhook events,
// signed with the library's own test helper, credit it once however often and however concurrently they
// arrive, reverse it on a full refund (also when the refund arrives first), suspend the account on a
// dispute, and nothing unsigned, wrongly signed or stale changes money. Stripe's API is a local stand-in
// (the card network cannot be reached from here); everything else is the gateway as it runs.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { decideHeld } from '../../../../proxy/accounts/payments/payments.ts'
import { confirmSecrets } from '../../../../proxy/accounts/people/accountless.ts'
import { liftSuspension } from '../../../../proxy/accounts/suspension.ts'
import { admin, sessionFor } from '../../../helpers/admin.ts'
import { startTestGateway, testModel, type TestGateway } from '../../../helpers/gateway.ts'
import { settledAccount, sumOf } from '../../../helpers/ledger.ts'
import { completedSession, signedEvent, stripeStandIn } from '../../../helpers/stripe.ts'

const SECRET = 'whsec_test_secret'
const USD = 1_000_000_000

describe('card top-ups through Stripe', () => {
  let gw: TestGateway
  let standIn: ReturnType<typeof stripeStandIn>
  beforeAll(async () => {
    standIn = stripeStandIn()
    gw = await startTestGateway({
      store: 'memory',
      database: 'embedded',
      models: [testModel('test/cheap', 'fake'), testModel('test/slow', 'fake?delay=400')],
      env: {
        STRIPE_SECRET_KEY: 'sk_test_gateway',
        STRIPE_WEBHOOK_SECRET: SECRET,
        STRIPE_API_URL: standIn.url,
        TOPUP_MIN_USD: '5',
        TOPUP_MAX_USD: '500',
      },
    })
  })
  afterAll(async () => {
    await gw.close()
    standIn.server.stop(true)
  })

  /**
   * A dashboard-link session (it acts as the owner of the accountless account), once the account's
   * secrets are confirmed saved (the rule for accountless accounts).
   */
  async function owner(accountId: string) {
    await confirmSecrets(gw.app.operator.sql, accountId, Date.now())
    return (await sessionFor(gw, accountId)).cookie
  }
  async function startTopUp(accountId: string, amountNano: number) {
    const response = await admin(gw, 'POST', '/admin/v1/billing/top-up', {
      cookie: await owner(accountId),
      body: { amountNano },
    })
    expect(response.status).toBe(200)
    return (await response.json()) as { method: string; url: string; paymentId: string }
  }
  /** A webhook delivery: the event signed with `secret` at `timestamp` (seconds), posted to the site. */
  async function deliver(
    event: Record<string, unknown>,
    options: { secret?: string; timestamp?: number; signature?: string | null } = {},
  ): Promise<Response> {
    const signed = await signedEvent(event, options.secret ?? SECRET, options.timestamp)
    const signature = options.signature !== undefined ? options.signature : signed.signature
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    if (signature) headers['stripe-signature'] = signature
    return gw.app.site.handle(
      new Request('http://site.test/webhooks/stripe', {
        method: 'POST',
        headers,
        body: signed.payload,
      }),
    )
  }
  const completed = completedSession
  const charge = (type: string, intent: string, cents: number, refunded = cents) => ({
    id: `evt_${crypto.randomUUID()}`,
    type,
    data: {
      object: {
        id: `ch_${crypto.randomUUID().slice(0, 8)}`,
        object: type.startsWith('charge.dispute') ? 'dispute' : 'charge',
        payment_intent: intent,
        amount: cents,
        amount_refunded: refunded,
      },
    },
  })
  const sessionOf = (url: string) => url.split('/pay/')[1]!

  test('the owner starts a checkout within the bounds; others and out-of-bounds amounts are refused by name', async () => {
    const accountId = await gw.account('0')
    const started = await startTopUp(accountId, 20 * USD)
    expect(started.method).toBe('card')
    const form = standIn.created.at(-1)!
    expect(form.get('line_items[0][price_data][unit_amount]')).toBe('2000')
    expect(form.get('client_reference_id')).toBe(accountId)
    expect(form.get('success_url')).toBe('http://site.test/dashboard/billing?checkout=success')

    for (const amountNano of [4 * USD, 501 * USD, 5 * USD + 1]) {
      const refused = await admin(gw, 'POST', '/admin/v1/billing/top-up', {
        cookie: await owner(accountId),
        body: { amountNano },
      })
      expect(refused.status).toBe(400)
      expect(((await refused.json()) as { error: { param: string } }).error.param).toBe(
        'amountNano',
      )
    }
    const member = await sessionFor(gw, accountId, 'member')
    const forbidden = await admin(gw, 'POST', '/admin/v1/billing/top-up', {
      cookie: member.cookie,
      body: { amountNano: 20 * USD },
    })
    expect(forbidden.status).toBe(403)

    const billing = await admin(gw, 'GET', '/admin/v1/billing', { cookie: member.cookie })
    expect(((await billing.json()) as { topUp: unknown }).topUp).toMatchObject({
      allowed: false,
      card: { minUsd: '5', maxUsd: '500' },
    })
    const payments = await admin(gw, 'GET', '/admin/v1/billing/payments', {
      cookie: member.cookie,
    })
    expect(((await payments.json()) as { payments: unknown[] }).payments).toMatchObject([
      { id: started.paymentId, state: 'pending', amountNano: 20 * USD, amountUsd: '20' },
    ])
  })

  test('nothing unsigned, wrongly signed or stale is applied', async () => {
    const accountId = await gw.account('0')
    const started = await startTopUp(accountId, 10 * USD)
    const event = completed(sessionOf(started.url), 'pi_unsigned', 1000)
    for (const options of [
      { signature: null },
      { secret: 'whsec_other' },
      { timestamp: Math.floor(Date.now() / 1000) - 600 },
      { signature: 't=1,v1=00' },
    ]) {
      const response = await deliver(event, options)
      expect(response.status).toBe(400)
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
        'invalid_request',
      )
    }
    const { snapshot, ledger } = await settledAccount(gw, accountId)
    expect(snapshot.balanceNano).toBe(0)
    expect(ledger).toHaveLength(0)
    const unknown = await deliver({ id: 'evt_x', type: 'customer.created', data: { object: {} } })
    expect(unknown.status).toBe(200)
    expect(await unknown.json()).toEqual({ received: true, handled: false })
  })

  test('a thousand concurrent deliveries of the completed event credit once', async () => {
    const accountId = await gw.account('0')
    const started = await startTopUp(accountId, 25 * USD)
    const event = completed(sessionOf(started.url), 'pi_replayed', 2500)
    const responses = await Promise.all(Array.from({ length: 1_000 }, () => deliver(event)))
    expect(responses.every((response) => response.status === 200)).toBe(true)
    const { snapshot, ledger } = await settledAccount(gw, accountId)
    expect(ledger.filter((row) => row.kind === 'credit')).toHaveLength(1)
    expect(snapshot.balanceNano).toBe(25 * USD)
    expect(snapshot.balanceNano).toBe(sumOf(ledger))
  })

  test('a refund that arrives before the completion is sent again later, then reverses it', async () => {
    const accountId = await gw.account('0')
    const started = await startTopUp(accountId, 7 * USD)
    const refund = charge('charge.refunded', 'pi_early_refund', 700)
    expect((await deliver(refund)).status).toBe(409)
    expect((await deliver(completed(sessionOf(started.url), 'pi_early_refund', 700))).status).toBe(
      200,
    )
    expect((await settledAccount(gw, accountId)).snapshot.balanceNano).toBe(7 * USD)
    // Stripe sends the refund again: now it reverses the payment, once.
    expect((await deliver(refund)).status).toBe(200)
    expect((await deliver(refund)).status).toBe(200)
    const { snapshot, ledger } = await settledAccount(gw, accountId)
    expect(snapshot.balanceNano).toBe(0)
    expect(ledger.map((row) => [row.kind, row.amount_nano])).toEqual([
      ['credit', 7 * USD],
      ['adjustment', -7 * USD],
    ])
    // A partial refund leaves the balance for the operator to adjust (logged).
    const other = await startTopUp(accountId, 9 * USD)
    await deliver(completed(sessionOf(other.url), 'pi_partial', 900))
    expect((await deliver(charge('charge.refunded', 'pi_partial', 900, 100))).status).toBe(200)
    expect((await settledAccount(gw, accountId)).snapshot.balanceNano).toBe(9 * USD)
  })

  test('a session paid in another amount or currency is held for the operator, not credited as started', async () => {
    const accountId = await gw.account('0')
    const less = await startTopUp(accountId, 10 * USD)
    const yen = await startTopUp(accountId, 10 * USD)
    expect((await deliver(completed(sessionOf(less.url), 'pi_less', 100))).status).toBe(200)
    const inYen = completed(sessionOf(yen.url), 'pi_yen', 1000)
    Object.assign(inYen.data.object, { currency: 'jpy' })
    expect((await deliver(inYen)).status).toBe(200)
    const payments = await admin(gw, 'GET', '/admin/v1/billing/payments', {
      cookie: await owner(accountId),
    })
    expect(
      ((await payments.json()) as { payments: { state: string }[] }).payments.map((p) => p.state),
    ).toEqual(['held', 'held'])
    expect((await settledAccount(gw, accountId)).snapshot.balanceNano).toBe(0)
    // The operator decides: released, it is credited as started, once.
    await decideHeld(gw.app.operator, less.paymentId, 'release')
    expect((await deliver(completed(sessionOf(less.url), 'pi_less', 100))).status).toBe(200)
    const { snapshot, ledger } = await settledAccount(gw, accountId)
    expect(snapshot.balanceNano).toBe(10 * USD)
    expect(snapshot.balanceNano).toBe(sumOf(ledger))
  })

  test('a dispute suspends the account: a request running finishes, the next get 403 account_suspended', async () => {
    const accountId = await gw.account('0')
    const { key } = await gw.key(accountId)
    const started = await startTopUp(accountId, 10 * USD)
    await deliver(completed(sessionOf(started.url), 'pi_disputed', 1000))
    const body = { model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }] }
    expect((await gw.chat(key, body)).status).toBe(200)
    // The dispute arrives while a request is running: that one finishes and is charged.
    const running = gw.chat(key, { ...body, model: 'test/slow' })
    await Bun.sleep(100)
    expect((await deliver(charge('charge.dispute.created', 'pi_disputed', 1000))).status).toBe(200)
    const finished = await running
    expect(finished.status).toBe(200)
    expect(Number(finished.headers.get('x-service-cost-usd'))).toBeGreaterThan(0)
    const refused = await gw.chat(key, body)
    expect(refused.status).toBe(403)
    expect(refused.headers.get('x-service-error-code')).toBe('account_suspended')
    const [row] = await gw.app.gateway.sql<{ status: string; suspended_reason: string }[]>`
      SELECT status, suspended_reason FROM accounts WHERE id = ${accountId}`
    expect(row).toEqual({ status: 'suspended', suspended_reason: 'chargeback' })
    // The dashboard says why.
    const me = await admin(gw, 'GET', '/admin/v1/me', { cookie: await owner(accountId) })
    expect(((await me.json()) as { account: unknown }).account).toMatchObject({
      status: 'suspended',
      suspendedReason: 'chargeback',
    })
  })

  test('a dispute delivered again after the operator lifted its suspension changes nothing; another dispute suspends', async () => {
    const accountId = await gw.account('0')
    const { key } = await gw.key(accountId)
    const started = await startTopUp(accountId, 10 * USD)
    await deliver(completed(sessionOf(started.url), 'pi_disputed_twice', 1000))
    const dispute = charge('charge.dispute.created', 'pi_disputed_twice', 1000)
    expect((await deliver(dispute)).status).toBe(200)
    await liftSuspension(gw.app.operator, accountId)
    const body = { model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }] }
    // Stripe sends the same event again, or the same dispute under a new event.
    expect((await deliver(dispute)).status).toBe(200)
    expect((await deliver({ ...dispute, id: `evt_${crypto.randomUUID()}` })).status).toBe(200)
    expect((await gw.chat(key, body)).status).toBe(200)
    expect(
      (await deliver(charge('charge.dispute.created', 'pi_disputed_twice', 1000))).status,
    ).toBe(200)
    expect((await gw.chat(key, body)).status).toBe(403)
  })
})

describe('a server without card payments', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'embedded' })
  })
  afterAll(() => gw.close())

  test('the webhook is not there, and a top-up answers how to ask the operator', async () => {
    const hook = await gw.app.site.handle(
      new Request('http://site.test/webhooks/stripe', { method: 'POST', body: '{}' }),
    )
    expect(hook.status).toBe(404)
    const accountId = await gw.account('0')
    await confirmSecrets(gw.app.operator.sql, accountId, Date.now())
    const { cookie } = await sessionFor(gw, accountId, 'owner')
    const response = await admin(gw, 'POST', '/admin/v1/billing/top-up', { cookie })
    expect(await response.json()).toMatchObject({ method: 'operator', accountId })
  })
})
