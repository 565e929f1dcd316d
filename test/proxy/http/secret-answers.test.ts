// Every answer that carries a secret shown once (an API key, a dashboard link) is `cache-control:
// no-store`, on whichever server and route makes it: the API server's key rotation, the operator API's
// key creation and link replacement, the admin API's setup, key creation and rotation.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createAccountless } from '../../../proxy/accounts/people/accountless.ts'
import { admin, sessionFor } from '../../helpers/admin.ts'
import { startTestGateway, type TestGateway } from '../../helpers/gateway.ts'
import { describeWith } from '../../helpers/services.ts'

describeWith(['postgres', 'redis'], 'answers that carry a secret', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'redis', database: 'postgres' })
  })
  afterAll(() => gw?.close())

  const operator = (method: string, path: string, body?: unknown) =>
    gw.app.site.handle(
      new Request(`http://site.test/operator/v1${path}`, {
        method,
        headers: {
          authorization: 'Bearer test-operator-token',
          'content-type': 'application/json',
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    )

  test('POST /keys/:id/rotate on the API server: the new key is not cached', async () => {
    const { id, key } = await gw.key(await gw.account('1'))
    const response = await gw.app.api.handle(
      new Request(`http://gateway.test/keys/${id}/rotate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}` },
      }),
    )
    expect(response.status).toBe(201)
    expect(((await response.json()) as { key: string }).key).toMatch(/^svc-live-/)
    expect(response.headers.get('cache-control')).toBe('no-store')
  })

  test('the operator API: a created key and a replaced dashboard link are not cached', async () => {
    const accountId = await gw.account('1')
    const created = await operator('POST', '/keys', { accountId })
    expect(created.status).toBe(201)
    expect(((await created.json()) as { key: string }).key).toMatch(/^svc-live-/)
    expect(created.headers.get('cache-control')).toBe('no-store')

    const accountless = await createAccountless(gw.app.operator)
    const replaced = await operator('POST', `/accounts/${accountless.accountId}/link`)
    expect(replaced.status).toBe(200)
    expect(((await replaced.json()) as { dashboardLink: string }).dashboardLink).toContain('#link=')
    expect(replaced.headers.get('cache-control')).toBe('no-store')
  })

  test('the admin API: a created and a rotated key are not cached', async () => {
    const accountId = await gw.account('1')
    const { cookie } = await sessionFor(gw, accountId, 'owner')
    const created = await admin(gw, 'POST', '/admin/v1/keys', { cookie, body: {} })
    expect(created.status).toBe(201)
    expect(created.headers.get('cache-control')).toBe('no-store')
    const { id } = (await created.json()) as { id: string }
    const rotated = await admin(gw, 'POST', `/admin/v1/keys/${id}/rotate`, { cookie })
    expect(rotated.status).toBe(201)
    expect(rotated.headers.get('cache-control')).toBe('no-store')
  })
})
