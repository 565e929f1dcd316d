// The admin API's session: who it is, switching account, signing out, origin checks on writes, OpenAPI.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { admin, sessionFor } from '../../../helpers/admin.ts'
import { startTestGateway, type TestGateway } from '../../../helpers/gateway.ts'
import { describeWith } from '../../../helpers/services.ts'

describeWith('postgres', 'admin session', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres' })
  })
  afterAll(() => gw.close())

  test('without a session the admin API answers 401', async () => {
    const response = await admin(gw, 'GET', '/admin/v1/me')
    expect(response.status).toBe(401)
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('unauthorized')
  })

  test('a dashboard-link session acts as the owner of its account', async () => {
    const accountId = await gw.account('1')
    const { cookie } = await sessionFor(gw, accountId)
    const me = await (await admin(gw, 'GET', '/admin/v1/me', { cookie })).json()
    expect(me).toEqual({
      account: { id: accountId, kind: 'accountless', status: 'active', suspendedReason: null },
      role: 'owner',
      via: 'link',
      user: null,
      memberships: [{ accountId, role: 'owner' }],
    })
  })

  test("a user's session switches among the user's accounts only", async () => {
    const first = await gw.account('1')
    const second = await gw.account('1')
    const { cookie, userId } = await sessionFor(gw, first, 'member')
    await gw.app.operator
      .sql`INSERT INTO memberships (account_id, user_id, role) VALUES (${second}, ${userId}, 'admin')`
    expect(
      (await admin(gw, 'PUT', '/admin/v1/session/account', { cookie, body: { accountId: second } }))
        .status,
    ).toBe(200)
    expect(
      ((await (await admin(gw, 'GET', '/admin/v1/me', { cookie })).json()) as { role: string })
        .role,
    ).toBe('admin')
    const other = await gw.account('1')
    expect(
      (await admin(gw, 'PUT', '/admin/v1/session/account', { cookie, body: { accountId: other } }))
        .status,
    ).toBe(404)
    const unknown = await admin(gw, 'PUT', '/admin/v1/session/account', {
      cookie,
      body: { accountId: second, extra: 1 },
    })
    expect(unknown.status).toBe(400)
    expect(((await unknown.json()) as { error: { param: string } }).error.param).toBe('extra')
  })

  test('signing out ends the session and clears the cookie', async () => {
    const { cookie } = await sessionFor(gw, await gw.account('1'))
    const out = await admin(gw, 'DELETE', '/admin/v1/session', { cookie })
    expect(out.headers.get('set-cookie')).toContain('Max-Age=0')
    expect((await admin(gw, 'GET', '/admin/v1/me', { cookie })).status).toBe(401)
  })

  describe('writes from another origin are refused', () => {
    test('a foreign Origin, or no Origin and no Fetch-Metadata', async () => {
      const { cookie } = await sessionFor(gw, await gw.account('1'))
      expect(
        (await admin(gw, 'DELETE', '/admin/v1/session', { cookie, origin: 'https://evil.test' }))
          .status,
      ).toBe(403)
      expect(
        (await admin(gw, 'DELETE', '/admin/v1/session', { cookie, origin: null })).status,
      ).toBe(403)
      expect((await admin(gw, 'GET', '/admin/v1/me', { cookie })).status).toBe(200)
    })
  })

  test('the API is described as OpenAPI', async () => {
    const spec = (await (await admin(gw, 'GET', '/admin/v1/openapi/json')).json()) as {
      paths: Record<string, unknown>
    }
    expect(Object.keys(spec.paths)).toContain('/admin/v1/me')
  })

  test("no page of the site runs another site's script: the OpenAPI addresses lead to the documents", async () => {
    for (const prefix of ['/admin/v1', '/operator/v1']) {
      const response = await admin(gw, 'GET', `${prefix}/openapi`)
      expect(response.status).toBe(308)
      expect(response.headers.get('location')).toBe(`${prefix}/openapi/json`)
      expect(await response.text()).not.toContain('<script')
    }
    const spec = await gw.app.site.handle(new Request('http://site.test/operator/v1/openapi/json'))
    expect(spec.status).toBe(200)
    expect(Object.keys(((await spec.json()) as { paths: object }).paths)).toContain(
      '/operator/v1/accounts',
    )
  })
})
