// Suspension: the operator API (and the hook functions integrations will call) suspends an account;
// every API request of every style gets 403 account_suspended at once, also on another process sharing
// Redis; admin sessions keep reading but cannot change anything; lifting it restores everything.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { liftSuspension, suspendAccount } from '../../../proxy/accounts/suspension.ts'
import { admin, sessionFor } from '../../helpers/admin.ts'
import { startTestGateway, type TestGateway } from '../../helpers/gateway.ts'
import { describeWith } from '../../helpers/services.ts'
import { expectRefusal, operator } from './settings/operator-client.ts'

type Json = Record<string, any>
const hello = [{ role: 'user', content: 'hello' }]

/**
 * One request of each kind the API server authenticates, as its status and error code; every answer
 * carries the account's balance (the key is known, suspended or not), a malformed body's refusal too.
 */
async function everyStyle(
  gw: TestGateway,
  key: string,
): Promise<Record<string, { status: number; code?: string }>> {
  const send = async (
    path: string,
    init: { method?: string; headers?: Record<string, string>; body?: unknown },
  ) => {
    const response = await gw.app.api.handle(
      new Request(`http://gateway.test${path}`, {
        method: init.method ?? 'POST',
        headers: { 'content-type': 'application/json', ...init.headers },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      }),
    )
    const body = (await response.json()) as Json
    expect(response.headers.get('x-service-error-code') ?? undefined).toBe(body.error?.code)
    expect({ path, balance: response.headers.get('x-service-balance-usd') }).toEqual({
      path,
      balance: expect.stringMatching(/^\d+\.\d+$/),
    })
    return { status: response.status, code: body.error?.code as string | undefined }
  }
  const bearer = { authorization: `Bearer ${key}` }
  return {
    chat: await send('/v1/chat/completions', {
      headers: bearer,
      body: { model: 'test/cheap', messages: hello },
    }),
    messages: await send('/v1/messages', {
      headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
      body: { model: 'test/cheap', max_tokens: 20, messages: hello },
    }),
    responses: await send('/v1/responses', {
      headers: bearer,
      body: { model: 'test/cheap', input: 'hello', store: false },
    }),
    alias: await send('/api/v1/chat/completions', {
      headers: bearer,
      body: { model: 'test/cheap', messages: hello },
    }),
    malformed: await send('/v1/chat/completions', {
      headers: bearer,
      body: { model: 'test/cheap', messages: 'not a list' },
    }),
    models: await send('/v1/models', { method: 'GET', headers: bearer }),
    imageStatus: await send('/v1/images/status?request_id=req_unknown', {
      method: 'GET',
      headers: bearer,
    }),
    rotate: await send('/keys/key_unknown/rotate', { headers: bearer }),
  }
}

describeWith(['postgres', 'redis'], 'account suspension', () => {
  let gw: TestGateway
  let sibling: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'redis', database: 'postgres' })
    sibling = await startTestGateway({ store: 'redis', database: 'postgres', sibling: gw })
  })
  afterAll(async () => {
    await sibling?.close()
    await gw?.close()
  })

  test('a suspended account gets 403 account_suspended on every request, at once; lifted, it works again', async () => {
    const accountId = await gw.account('10')
    const { key } = await gw.key(accountId)
    const working = await everyStyle(gw, key)
    expect(working.chat).toEqual({ status: 200, code: undefined })
    expect(working.messages).toEqual({ status: 200, code: undefined })
    expect(working.responses).toEqual({ status: 200, code: undefined })
    expect(working.malformed).toEqual({ status: 400, code: 'invalid_request' })
    expect(working.imageStatus).toEqual({ status: 404, code: 'not_found' })
    expect(working.rotate).toEqual({ status: 403, code: 'forbidden' })

    const suspended = await operator(gw, 'POST', `/accounts/${accountId}/suspend`, {
      reason: 'abuse',
      note: 'report #12',
    })
    expect(suspended.status).toBe(200)
    expect(suspended.body).toMatchObject({
      accountId,
      status: 'suspended',
      reason: 'abuse',
      note: 'report #12',
    })
    const refused = await everyStyle(gw, key)
    // A malformed body too: the key's refusal comes before the body's.
    for (const [style, outcome] of Object.entries(refused))
      expect({ style, ...outcome }).toEqual({ style, status: 403, code: 'account_suspended' })

    const lifted = await operator(gw, 'POST', `/accounts/${accountId}/unsuspend`)
    expect(lifted.body).toEqual({
      accountId,
      status: 'active',
      reason: null,
      note: null,
      suspendedAt: null,
    })
    expect((await everyStyle(gw, key)).chat).toEqual({ status: 200, code: undefined })
  })

  test('another process sharing Redis refuses within a second, and accepts again once lifted', async () => {
    const accountId = await gw.account('10')
    const { key } = await gw.key(accountId)
    const status = async () =>
      (await sibling.chat(key, { model: 'test/cheap', messages: hello })).status
    expect(await status()).toBe(200)
    await suspendAccount(gw.app.operator, accountId, 'chargeback')
    expect(await within(1_000, status, 403)).toBe(403)
    await liftSuspension(gw.app.operator, accountId)
    expect(await within(1_000, status, 200)).toBe(200)
  })

  test('the hook functions record the cause; a second suspension keeps the first time', async () => {
    const accountId = await gw.account('1')
    const first = await suspendAccount(gw.app.operator, accountId, 'sanctions', 'list match')
    const second = await suspendAccount(gw.app.operator, accountId, 'chargeback')
    expect(second).toMatchObject({
      status: 'suspended',
      reason: 'chargeback',
      note: null,
      suspendedAt: first.suspendedAt,
    })
    const [row] = await gw.app.operator
      .sql`SELECT status, suspended_reason FROM accounts WHERE id = ${accountId}`
    expect(row).toEqual({ status: 'suspended', suspended_reason: 'chargeback' })
  })

  test('the operator API refuses an unknown reason or account', async () => {
    const accountId = await gw.account('1')
    expectRefusal(
      await operator(gw, 'POST', `/accounts/${accountId}/suspend`, { reason: 'boredom' }),
      400,
      'invalid_request',
      'reason',
    )
    expectRefusal(
      await operator(gw, 'POST', `/accounts/${accountId}/suspend`, {}),
      400,
      'invalid_request',
      'reason',
    )
    expectRefusal(
      await operator(gw, 'POST', '/accounts/acct_missing/suspend', { reason: 'operator' }),
      404,
      'not_found',
    )
    expectRefusal(await operator(gw, 'POST', '/accounts/acct_missing/unsuspend'), 404, 'not_found')
  })

  test('a suspended account can read in the dashboard and revoke keys, but not change anything else', async () => {
    const accountId = await gw.account('1')
    const { id } = await gw.key(accountId)
    const { cookie } = await sessionFor(gw, accountId, 'owner')
    await suspendAccount(gw.app.operator, accountId, 'abuse')
    for (const path of [
      '/admin/v1/me',
      '/admin/v1/keys',
      '/admin/v1/billing',
      '/admin/v1/presets',
      '/admin/v1/guardrails',
      '/admin/v1/routing',
    ]) {
      expect({ path, status: (await admin(gw, 'GET', path, { cookie })).status }).toEqual({
        path,
        status: 200,
      })
    }
    for (const [method, path, body] of [
      ['POST', '/admin/v1/keys', {}],
      ['PATCH', `/admin/v1/keys/${id}`, { name: 'x' }],
      ['POST', `/admin/v1/keys/${id}/rotate`, undefined],
      ['PUT', '/admin/v1/presets/p', { model: 'test/cheap' }],
      ['POST', '/admin/v1/guardrails', { name: 'g' }],
      ['PUT', '/admin/v1/routing', { models: null }],
      ['POST', '/admin/v1/billing/top-up', undefined],
    ] as const) {
      const response = await admin(gw, method, path, { cookie, body })
      const code = ((await response.json()) as Json).error?.code
      expect({ path, status: response.status, code }).toEqual({
        path,
        status: 403,
        code: 'account_suspended',
      })
    }
    const billing = (await (await admin(gw, 'GET', '/admin/v1/billing', { cookie })).json()) as Json
    expect(billing.topUp.allowed).toBe(false)
    // Revoking only takes access away: a key that leaked can be stopped during the suspension.
    const revoked = await admin(gw, 'POST', `/admin/v1/keys/${id}/revoke`, { cookie })
    expect(revoked.status).toBe(200)
    expect(((await revoked.json()) as Json).status).toBe('revoked')
  })
})

/** Polls until `read` returns `expected` or the time is up; returns the last value. */
async function within<T>(ms: number, read: () => Promise<T>, expected: T): Promise<T> {
  const deadline = Date.now() + ms
  let value = await read()
  while (value !== expected && Date.now() < deadline) {
    await Bun.sleep(20)
    value = await read()
  }
  return value
}
