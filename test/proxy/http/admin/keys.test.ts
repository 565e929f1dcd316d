// The admin API's key routes: the list never carries a secret, create/edit/revoke/rotate within the
// session's account only, spend caps on by default, and a revocation refused at once here and, within a
// second, by another process sharing Redis.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { admin, sessionFor } from '../../../helpers/admin.ts'
import { startTestGateway, type TestGateway } from '../../../helpers/gateway.ts'
import { describeWith } from '../../../helpers/services.ts'

const hello = [{ role: 'user', content: 'hello' }]
type Json = Record<string, any>

async function call(
  gw: TestGateway,
  method: string,
  path: string,
  cookie: string,
  body?: unknown,
): Promise<{ status: number; body: Json }> {
  const response = await admin(gw, method, `/admin/v1${path}`, { cookie, body })
  return { status: response.status, body: (await response.json()) as Json }
}

describeWith(['postgres', 'redis'], 'admin key routes', () => {
  let gw: TestGateway
  let sibling: TestGateway
  let accountId: string
  let owner: string
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'redis', database: 'postgres' })
    sibling = await startTestGateway({ store: 'redis', database: 'postgres', sibling: gw })
    accountId = await gw.account('10')
    owner = (await sessionFor(gw, accountId, 'owner')).cookie
  })
  afterAll(async () => {
    await sibling?.close()
    await gw?.close()
  })

  test('a created key is returned once, works, and the list never shows a secret or its hash', async () => {
    const created = await call(gw, 'POST', '/keys', owner, {
      name: 'ci',
      rpmLimit: 100,
      allowedModels: ['test/cheap'],
    })
    expect(created.status).toBe(201)
    expect(created.body.key).toMatch(/^svc-live-[1-9A-HJ-NP-Za-km-z]{26}$/)
    expect(created.body).toMatchObject({
      name: 'ci',
      prefix: created.body.key.slice(0, 14),
      status: 'active',
      rpmLimit: 100,
      allowedModels: ['test/cheap'],
      lastUsedAt: null,
    })
    expect((await gw.chat(created.body.key, { model: 'test/cheap', messages: hello })).status).toBe(
      200,
    )

    const listed = await call(gw, 'GET', '/keys', owner)
    expect(listed.status).toBe(200)
    const text = JSON.stringify(listed.body)
    expect(text).not.toContain(created.body.key)
    expect(text).not.toMatch(/hash|svc-live-[1-9A-HJ-NP-Za-km-z]{26}/)
    const row = listed.body.keys.find((key: Json) => key.id === created.body.id)
    expect(row).toMatchObject({ name: 'ci', prefix: created.body.prefix, status: 'active' })
    expect(row.key).toBeUndefined()
  })

  test('spend caps are on by default; null removes one', async () => {
    const identity = await gw.account('1')
    await gw.app.operator.sql`UPDATE accounts SET kind = 'identity' WHERE id = ${identity}`
    const { cookie } = await sessionFor(gw, identity, 'owner')
    const capped = await call(gw, 'POST', '/keys', cookie, {})
    expect(capped.body).toMatchObject({
      dailyLimitNano: 50_000_000_000,
      dailyLimitUsd: '50',
      monthlyLimitNano: 500_000_000_000,
      monthlyLimitUsd: '500',
    })
    const uncapped = await call(gw, 'POST', '/keys', cookie, {
      dailyLimitNano: null,
      monthlyLimitNano: 2_000_000_000,
    })
    expect(uncapped.body).toMatchObject({
      dailyLimitNano: null,
      dailyLimitUsd: null,
      monthlyLimitNano: 2_000_000_000,
      monthlyLimitUsd: '2',
    })
  })

  test('an accountless account gets the lower default caps', async () => {
    const { cookie } = await sessionFor(gw, await gw.account('1'))
    const capped = await call(gw, 'POST', '/keys', cookie, {})
    expect(capped.body).toMatchObject({ dailyLimitUsd: '10', monthlyLimitUsd: '100' })
  })

  test('the defaults a new key gets are readable before creating one, for every member', async () => {
    const accountless = (await sessionFor(gw, await gw.account('1'))).cookie
    expect((await call(gw, 'GET', '/keys/defaults', accountless)).body).toEqual({
      dailyLimitNano: 10_000_000_000,
      dailyLimitUsd: '10',
      monthlyLimitNano: 100_000_000_000,
      monthlyLimitUsd: '100',
    })
    const identity = await gw.account('1')
    await gw.app.operator.sql`UPDATE accounts SET kind = 'identity' WHERE id = ${identity}`
    const member = (await sessionFor(gw, identity, 'member')).cookie
    const defaults = await call(gw, 'GET', '/keys/defaults', member)
    expect(defaults).toMatchObject({
      status: 200,
      body: { dailyLimitUsd: '50', monthlyLimitUsd: '500' },
    })
    const created = await call(
      gw,
      'POST',
      '/keys',
      (await sessionFor(gw, identity, 'owner')).cookie,
      {},
    )
    expect(created.body).toMatchObject({
      dailyLimitNano: defaults.body.dailyLimitNano,
      monthlyLimitNano: defaults.body.monthlyLimitNano,
    })
  })

  test('edits apply to the next request; bad edits are refused naming the field', async () => {
    const { body: key } = await call(gw, 'POST', '/keys', owner, { name: 'edit me' })
    const guardrail = await call(gw, 'POST', '/guardrails', owner, { name: `g-${key.id}` })
    const edited = await call(gw, 'PATCH', `/keys/${key.id}`, owner, {
      name: 'edited',
      allowedModels: ['test/other'],
      tpmLimit: 50_000,
      concurrency: 3,
      guardrailId: guardrail.body.id,
    })
    expect(edited.status).toBe(200)
    expect(edited.body).toMatchObject({
      name: 'edited',
      allowedModels: ['test/other'],
      tpmLimit: 50_000,
      concurrency: 3,
      guardrailId: guardrail.body.id,
    })
    expect((await gw.chat(key.key, { model: 'test/cheap', messages: hello })).status).toBe(403)
    expect(
      (
        await call(gw, 'PATCH', `/keys/${key.id}`, owner, {
          allowedModels: null,
          guardrailId: null,
        })
      ).body,
    ).toMatchObject({ allowedModels: null, guardrailId: null })
    expect((await gw.chat(key.key, { model: 'test/cheap', messages: hello })).status).toBe(200)

    const refused = async (body: unknown, param?: string) => {
      const answer = await call(gw, 'PATCH', `/keys/${key.id}`, owner, body)
      expect(answer.status).toBe(400)
      expect(answer.body.error.code).toBe('invalid_request')
      if (param) expect(answer.body.error.param).toBe(param)
      return answer.body.error.message as string
    }
    await refused({ allowedModels: [] }, 'allowedModels')
    expect(await refused({ allowedModels: ['test/nope'] }, 'allowedModels')).toStartWith(
      'Allowed models: unknown model IDs: test/nope.',
    )
    await refused({ rpmLimit: -1 }, 'rpmLimit')
    // Beyond what an account's limit may be (and the column holds): refused naming the field, not a 500.
    for (const field of ['rpmLimit', 'tpmLimit', 'concurrency'])
      expect(await refused({ [field]: 3_000_000_000 }, field)).toContain('1000000000')
    await refused({ dailyLimitNano: 1.5 }, 'dailyLimitNano')
    // 0 would read as "a limit of nothing" and was taken as none: null is none, 0 is refused.
    for (const field of [
      'rpmLimit',
      'tpmLimit',
      'concurrency',
      'dailyLimitNano',
      'monthlyLimitNano',
    ])
      expect(await refused({ [field]: 0 }, field)).toContain('1')
    expect((await call(gw, 'POST', '/keys', owner, { monthlyLimitNano: 0 })).status).toBe(400)
    await refused({ secret: 'x' }, 'secret')
    expect(await refused({})).toBe(
      'Nothing to change: give Name, Requests per minute, Tokens per minute, Requests at once, Daily spend cap (USD), Monthly spend cap (USD), Allowed models or Guardrail.',
    )
    const foreign = await call(
      gw,
      'POST',
      '/guardrails',
      (await sessionFor(gw, await gw.account('1'), 'owner')).cookie,
      { name: 'theirs' },
    )
    expect(await refused({ guardrailId: foreign.body.id }, 'guardrailId')).toContain('no guardrail')
    expect((await call(gw, 'POST', '/keys', owner, { guardrailId: foreign.body.id })).status).toBe(
      400,
    )
  })

  test("the list says what each working key's caps count now: its lineage's spend today and this month", async () => {
    const account = await gw.account('10')
    const cookie = (await sessionFor(gw, account, 'owner')).cookie
    const created = await call(gw, 'POST', '/keys', cookie, { name: 'spender' })
    for (let i = 0; i < 2; i++)
      expect(
        (await gw.chat(created.body.key, { model: 'test/cheap', messages: hello })).status,
      ).toBe(200)
    // Rotated: the new key counts in the same windows; the old one, in its grace, shows them too.
    const rotated = await call(gw, 'POST', `/keys/${created.body.id}/rotate`, cookie)
    const revoked = await call(gw, 'POST', '/keys', cookie, { name: 'gone' })
    await call(gw, 'POST', `/keys/${revoked.body.id}/revoke`, cookie)
    // Charges inside a lease reach the shared record with its next round.
    const spendOf = async () => {
      const keys = (await call(gw, 'GET', '/keys', cookie)).body.keys as Json[]
      return Object.fromEntries(keys.map((key) => [key.id, key.spend]))
    }
    const deadline = Date.now() + 5_000
    let spend = await spendOf()
    while (spend[rotated.body.id]?.todayNano !== 38_000 && Date.now() < deadline) {
      await Bun.sleep(100)
      spend = await spendOf()
    }
    const counted = {
      todayNano: 38_000,
      todayUsd: '0.000038',
      monthNano: 38_000,
      monthUsd: '0.000038',
      heldNano: 0,
      heldUsd: '0',
    }
    expect(spend[rotated.body.id]).toEqual(counted)
    expect(spend[created.body.id]).toEqual(counted)
    expect(spend[revoked.body.id]).toBeUndefined()
  })

  test("another account's key is not found, for every operation", async () => {
    const other = await gw.account('1')
    const { id } = await gw.key(other)
    for (const [method, path, body] of [
      ['PATCH', `/keys/${id}`, { name: 'mine' }],
      ['POST', `/keys/${id}/revoke`, undefined],
      ['POST', `/keys/${id}/rotate`, undefined],
    ] as const) {
      const answer = await call(gw, method, path, owner, body)
      expect({ path, status: answer.status, code: answer.body.error?.code }).toEqual({
        path,
        status: 404,
        code: 'not_found',
      })
    }
    expect(
      (await call(gw, 'GET', '/keys', owner)).body.keys.some((key: Json) => key.id === id),
    ).toBe(false)
  })

  test('members read the keys; only owner and admins change them', async () => {
    const member = (await sessionFor(gw, accountId, 'member')).cookie
    const teamAdmin = (await sessionFor(gw, accountId, 'admin')).cookie
    expect((await call(gw, 'GET', '/keys', member)).status).toBe(200)
    const refused = await call(gw, 'POST', '/keys', member, {})
    expect(refused.status).toBe(403)
    expect(refused.body.error.code).toBe('forbidden')
    expect((await call(gw, 'POST', '/keys', teamAdmin, {})).status).toBe(201)
    expect((await admin(gw, 'GET', '/admin/v1/keys')).status).toBe(401)
  })

  test('a revocation is refused at once here, and within a second on another process', async () => {
    const { body: key } = await call(gw, 'POST', '/keys', owner, {})
    // Both processes have the key cached.
    expect((await gw.chat(key.key, { model: 'test/cheap', messages: hello })).status).toBe(200)
    expect((await sibling.chat(key.key, { model: 'test/cheap', messages: hello })).status).toBe(200)
    const revoked = await call(gw, 'POST', `/keys/${key.id}/revoke`, owner)
    expect(revoked.body).toMatchObject({ id: key.id, status: 'revoked' })
    expect(revoked.body.revokedAt).toBeString()
    expect((await gw.chat(key.key, { model: 'test/cheap', messages: hello })).status).toBe(401)
    const deadline = Date.now() + 1_000
    let status = 0
    while (Date.now() < deadline) {
      status = (await sibling.chat(key.key, { model: 'test/cheap', messages: hello })).status
      if (status === 401) break
      await Bun.sleep(20)
    }
    expect(status).toBe(401)
  })

  test('the last use is recorded from the request log, not on the request path', async () => {
    const { body: key } = await call(gw, 'POST', '/keys', owner, {})
    await (await gw.chat(key.key, { model: 'test/cheap', messages: hello })).text()
    const lastUsed = async () =>
      (await call(gw, 'GET', '/keys', owner)).body.keys.find((k: Json) => k.id === key.id)
        .lastUsedAt as string | null
    const deadline = Date.now() + 2_000
    while (!(await lastUsed()) && Date.now() < deadline) await Bun.sleep(20)
    expect(Date.parse((await lastUsed())!)).toBeGreaterThan(Date.now() - 60_000)
  })

  describe('the admin API documents the key routes', () => {
    test('in OpenAPI', async () => {
      const spec = (await (await admin(gw, 'GET', '/admin/v1/openapi/json')).json()) as {
        paths: Record<string, unknown>
      }
      expect(Object.keys(spec.paths)).toEqual(
        expect.arrayContaining([
          '/admin/v1/keys',
          '/admin/v1/keys/{id}',
          '/admin/v1/keys/{id}/revoke',
          '/admin/v1/keys/{id}/rotate',
        ]),
      )
    })
  })
})

describe('a configured default cap of 0', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({
      store: 'memory',
      database: 'embedded',
      env: { KEY_DAILY_LIMIT_USD: '0', ACCOUNTLESS_KEY_DAILY_LIMIT_USD: '0' },
    })
  })
  afterAll(() => gw?.close())

  test('gives new keys no such cap, shown as none; a key never stores a limit of 0', async () => {
    const accountId = await gw.account('1')
    const { cookie } = await sessionFor(gw, accountId, 'owner')
    expect((await call(gw, 'GET', '/keys/defaults', cookie)).body).toEqual({
      dailyLimitNano: null,
      dailyLimitUsd: null,
      monthlyLimitNano: 100_000_000_000,
      monthlyLimitUsd: '100',
    })
    const created = await call(gw, 'POST', '/keys', cookie, {})
    expect(created.body).toMatchObject({ dailyLimitNano: null, dailyLimitUsd: null })
    expect((await gw.chat(created.body.key, { model: 'test/cheap', messages: hello })).status).toBe(
      200,
    )
    const stored = await gw.app.operator.sql`
      UPDATE api_keys SET rpm_limit = 0 WHERE id = ${created.body.id} RETURNING id`.catch(
      (error) => error,
    )
    expect(String(stored)).toContain('api_keys_rpm_limit_check')
  })
})
