// The admin API's billing: the live balance and open holds for every member, the ledger in filtered keyset
// pages; the top-up step for the owner only, and for an accountless account only once both secrets are
// confirmed saved.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { TransactionSql } from 'postgres'
import { creditAccount } from '../../../../proxy/accounts/accounts.ts'
import { confirmSecrets } from '../../../../proxy/accounts/people/accountless.ts'
import type { Billing, Ledger } from '../../../../shared/schemas/admin/billing.ts'
import { admin, sessionFor } from '../../../helpers/admin.ts'
import { startTestGateway, type TestGateway } from '../../../helpers/gateway.ts'
import { describeWith, redisUrl } from '../../../helpers/services.ts'

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
        inFlight: 0,
        holds: [],
        availableNano: 12_500_000_000,
        balanceUsd: '12.5',
        heldUsd: '0',
        availableUsd: '12.5',
        topUp: { allowed: true, reason: null, deposits: false, card: null },
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
      expect(read.body.topUp.reason).toBe(
        `Not allowed for ${role === 'admin' ? 'an admin' : 'a member'}: only the account owner can top up the balance.`,
      )
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
    expect((await call('GET', '/billing', cookie)).body.topUp).toEqual({
      allowed: true,
      reason: null,
      deposits: false,
      card: null,
    })
    expect((await call('POST', '/billing/top-up', cookie)).status).toBe(200)
  })

  test('requests in progress show as open holds, by key with its name (in-process store)', () =>
    holdsByKey(gw))
  // Both stores count holds per key in the account's state; the Redis one reads them from its hash.
  test.if(redisUrl !== undefined)(
    'requests in progress show as open holds, by key with its name (Redis store)',
    async () => {
      const onRedis = await startTestGateway({ store: 'redis', database: 'postgres' })
      try {
        await holdsByKey(onRedis)
      } finally {
        await onRedis.close()
      }
    },
  )

  async function holdsByKey(gateway: TestGateway): Promise<void> {
    const accountId = await gateway.account('10')
    await gateway.app.operator.sql`UPDATE accounts SET kind = 'identity' WHERE id = ${accountId}`
    const { id: keyId } = await gateway.key(accountId, { name: 'batch jobs' })
    const { cookie } = await sessionFor(gateway, accountId, 'member')
    const call = async (method: string, path: string) => {
      const response = await admin(gateway, method, `/admin/v1${path}`, { cookie })
      return { status: response.status, body: (await response.json()) as Json }
    }
    await call('GET', '/billing') // loads the account into the store
    const { store } = gateway.app.operator
    const limits = {
      keyLimits: { rpm: 0, tpm: 0, concurrency: 0, dailyNano: 0, monthlyNano: 0 },
      accountLimits: { rpm: 0, tpm: 0, concurrency: 0 },
    }
    for (const [requestId, holdNano] of [
      ['req_hold_a', 1_500_000_000],
      ['req_hold_b', 500_000_000],
    ] as const) {
      expect(
        (await store.admit({ requestId, accountId, keyId, holdNano, tokens: 1, ...limits })).ok,
      ).toBe(true)
    }
    const billing = (await call('GET', '/billing')).body as Billing
    expect(billing).toMatchObject({
      heldUsd: '2',
      availableUsd: '8',
      balanceUsd: '10',
      inFlight: 2,
    })
    expect(billing.holds).toEqual([
      {
        keyId,
        name: 'batch jobs',
        prefix: expect.stringMatching(/^svc-live-/),
        inFlight: 2,
        heldNano: 2_000_000_000,
        heldUsd: '2',
      },
    ])
    await store.release(accountId, 'req_hold_a')
    await store.release(accountId, 'req_hold_b')
    expect((await call('GET', '/billing')).body).toMatchObject({
      inFlight: 0,
      holds: [],
      heldUsd: '0',
    })
  }

  test('the ledger lists credits and charges newest first, filtered by kind and time, in keyset pages', async () => {
    const accountId = await identityAccount('12.5')
    const { key, id: keyId } = await gw.key(accountId)
    const { cookie } = await sessionFor(gw, accountId, 'member')
    const response = await gw.chat(key, {
      model: 'test/cheap',
      messages: [{ role: 'user', content: 'hello' }],
    })
    const requestId = response.headers.get('x-request-id')!
    await response.arrayBuffer()
    await gw.app.gateway.writer.drain()
    await Bun.sleep(2)
    const credit = await creditAccount(
      gw.app.operator,
      accountId,
      2_000_000_000,
      'top-up by the operator',
    )

    const pages = async (query: string) => {
      const items: Ledger['items'] = []
      let before: string | null = null
      do {
        const page: Ledger = (
          await call(
            'GET',
            `/billing/ledger?limit=1&${query}${before ? `&before=${before}` : ''}`,
            cookie,
          )
        ).body as Ledger
        expect(page.items.length).toBeLessThanOrEqual(1)
        items.push(...page.items)
        before = page.nextBefore
      } while (before)
      return items
    }
    const all = await pages('')
    expect(all.map((entry) => [entry.kind, entry.reference])).toEqual([
      ['credit', credit.entryId],
      ['charge', requestId],
      ['credit', expect.any(String)],
    ])
    const charge = all[1]!
    expect(charge.amountNano).toBeLessThan(0)
    expect(charge).toMatchObject({
      keyId,
      amountUsd: String(charge.amountNano / 1e9),
      writtenOffNano: 0,
      writtenOffUsd: '0',
    })
    expect(all[0]).toMatchObject({
      amountNano: 2_000_000_000,
      amountUsd: '2',
      reason: 'top-up by the operator',
      keyId: null,
    })
    expect(all[2]).toMatchObject({ amountUsd: '12.5', reason: 'initial credit' })
    // The balance is the sum of the ledger's amounts.
    const billing = (await call('GET', '/billing', cookie)).body as Billing
    expect(all.reduce((sum, entry) => sum + entry.amountNano, 0)).toBe(billing.balanceNano)

    expect((await pages('kind=credit')).map((entry) => entry.reference)).toEqual([
      credit.entryId,
      all[2]!.reference,
    ])
    expect((await pages('kind=charge')).map((entry) => entry.reference)).toEqual([requestId])
    expect(await pages('kind=writeoff')).toEqual([])
    expect((await pages(`from=${all[0]!.time}`)).map((entry) => entry.kind)).toEqual(['credit'])
    expect((await pages(`to=${all[0]!.time}&kind=credit`)).map((entry) => entry.reference)).toEqual(
      [all[2]!.reference],
    )

    // Another account reads none of it.
    const stranger = (await sessionFor(gw, await identityAccount('1'), 'owner')).cookie
    expect(
      ((await call('GET', '/billing/ledger', stranger)).body as Ledger).items.map(
        (entry) => entry.reference,
      ),
    ).not.toContain(requestId)
  })

  test('a bad ledger query names its field', async () => {
    const { cookie } = await sessionFor(gw, await identityAccount('1'), 'owner')
    const notARowCursor = Buffer.from('1700000000000000:req_abc').toString('base64url')
    for (const [query, param] of [
      ['kind=refund', 'kind'],
      ['limit=0', 'limit'],
      ['before=nonsense', 'before'],
      [`before=${notARowCursor}`, 'before'],
      ['from=soon', 'from'],
      ['from=2025-02-01T00:00:00Z&to=2025-01-01T00:00:00Z', 'from'],
    ]) {
      const refused = await call('GET', `/billing/ledger?${query}`, cookie)
      expect(refused.status).toBe(400)
      expect(refused.body.error.param).toBe(param)
    }
  })

  test('a ledger page is one index range: all kinds and charges by account and time, the rare kinds by their own index', async () => {
    const accountId = await identityAccount('1')
    const explain = (query: (tx: TransactionSql) => Promise<{ 'QUERY PLAN': string }[]>) =>
      gw.app.operator.sql.begin(async (tx) => {
        await tx`SET LOCAL enable_seqscan = off`
        return (await query(tx)).map((row) => row['QUERY PLAN']).join('\n')
      })
    const every = await explain(
      (tx) => tx`
      EXPLAIN SELECT id FROM ledger WHERE account_id = ${accountId} ORDER BY created_at DESC, id DESC LIMIT 51`,
    )
    expect(every).toContain('ledger_account_time')
    const credits = await explain(
      (tx) => tx`
      EXPLAIN SELECT id FROM ledger WHERE account_id = ${accountId} AND kind <> 'charge' AND kind = ${'credit'} ORDER BY created_at DESC, id DESC LIMIT 51`,
    )
    expect(credits).toContain('ledger_account_rare_kinds')
    for (const plan of [every, credits]) expect(plan).not.toContain('Seq Scan')
  })

  test('without a session: 401', async () => {
    expect((await admin(gw, 'GET', '/admin/v1/billing')).status).toBe(401)
    expect((await admin(gw, 'GET', '/admin/v1/billing/ledger')).status).toBe(401)
    expect((await admin(gw, 'POST', '/admin/v1/billing/top-up')).status).toBe(401)
  })

  test('402 insufficient_credits says that only the owner can top up', async () => {
    const accountId = await gw.account('0.000001')
    const { key } = await gw.key(accountId)
    const response = await gw.chat(key, {
      model: 'test/cheap',
      messages: [{ role: 'user', content: 'hello' }],
    })
    expect(response.status).toBe(402)
    expect(((await response.json()) as Json).error.message).toContain('only the owner can top up')
  })
})
