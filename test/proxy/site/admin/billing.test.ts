// The admin API's billing: the live balance for every member; the top-up step for the owner only, and
// for an accountless account only once both secrets are confirmed saved.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { confirmSecrets } from '../../../../proxy/people/accountless.ts'
import { admin, sessionFor } from '../../../helpers/admin.ts'
import { startTestGateway, type TestGateway } from '../../../helpers/gateway.ts'
import { describeWith } from '../../../helpers/services.ts'

type Json = Record<string, any>

describeWith('postgres', 'admin billing', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres' })
  })
  afterAll(() => gw?.close())

  async function identityAccount(usd: string): Promise<string> {
    const accountId = await gw.account(usd)
    await gw.app.operator.sql`UPDATE accounts SET kind = 'identity' WHERE id = ${accountId}`
    return accountId
  }
  const call = async (method: string, path: string, cookie: string) => {
    const response = await admin(gw, method, `/admin/v1${path}`, { cookie })
    return { status: response.status, body: (await response.json()) as Json }
  }

  test('every member reads the live balance; only the owner may top up', async () => {
    const accountId = await identityAccount('12.5')
    const owner = (await sessionFor(gw, accountId, 'owner')).cookie
    const billing = await call('GET', '/billing', owner)
    expect(billing).toEqual({
      status: 200,
      body: {
        accountId,
        balanceNano: 12_500_000_000,
        heldNano: 0,
        availableNano: 12_500_000_000,
        balanceUsd: '12.5',
        heldUsd: '0',
        availableUsd: '12.5',
        topUp: { allowed: true, reason: null },
      },
    })
    const topUp = await call('POST', '/billing/top-up', owner)
    expect(topUp.status).toBe(200)
    expect(topUp.body).toMatchObject({ accountId, method: 'operator' })
    expect(topUp.body.instructions).toContain('contact the operator to add credit')
    expect(topUp.body.instructions).toContain(accountId)

    for (const role of ['member', 'admin'] as const) {
      const { cookie } = await sessionFor(gw, accountId, role)
      const read = await call('GET', '/billing', cookie)
      expect(read.body).toMatchObject({ availableUsd: '12.5', topUp: { allowed: false } })
      expect(read.body.topUp.reason).toContain('only the account owner can top up')
      const refused = await call('POST', '/billing/top-up', cookie)
      expect(refused.status).toBe(403)
      expect(refused.body.error.code).toBe('forbidden')
      expect(refused.body.error.message).toContain('only the account owner can top up')
    }
  })

  test('an accountless account is offered the top-up only after confirming both secrets', async () => {
    const accountId = await gw.account('0')
    const { cookie } = await sessionFor(gw, accountId)
    expect((await call('GET', '/billing', cookie)).body.topUp).toMatchObject({ allowed: false })
    const refused = await call('POST', '/billing/top-up', cookie)
    expect(refused.status).toBe(403)
    expect(refused.body.error.message).toContain('saved both the API key and the dashboard link')
    await confirmSecrets(gw.app.operator.sql, accountId, Date.now())
    expect((await call('GET', '/billing', cookie)).body.topUp).toEqual({ allowed: true, reason: null })
    expect((await call('POST', '/billing/top-up', cookie)).status).toBe(200)
  })

  test('without a session: 401', async () => {
    expect((await admin(gw, 'GET', '/admin/v1/billing')).status).toBe(401)
    expect((await admin(gw, 'POST', '/admin/v1/billing/top-up')).status).toBe(401)
  })

  test('402 insufficient_credits says that only the owner can top up', async () => {
    const accountId = await gw.account('0.000001')
    const { key } = await gw.key(accountId)
    const response = await gw.chat(key, { model: 'test/cheap', messages: [{ role: 'user', content: 'hello' }] })
    expect(response.status).toBe(402)
    expect(((await response.json()) as Json).error.message).toContain('only the owner can top up')
  })
})
