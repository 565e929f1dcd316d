// The dashboard link of an accountless account: exchanged by POST for a session cookie (HttpOnly, Secure,
// SameSite), with no Referer leaving the site; it keeps working after key rotation and after the account
// is claimed; a wrong secret is 401, and past the per-address limit 429.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createAccountless } from '../../../../proxy/accounts/people/accountless.ts'
import { createKey } from '../../../../proxy/accounts/keys.ts'
import { admin } from '../../../helpers/admin.ts'
import { startTestGateway, type TestGateway } from '../../../helpers/gateway.ts'
import { describeWith } from '../../../helpers/services.ts'

type ErrorBody = { error: { code: string; message: string; param: string | null } }

describeWith('postgres', 'dashboard link', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres', env: { SIGN_IN_ATTEMPTS_PER_MINUTE: '3' } })
  })
  afterAll(() => gw.close())

  const exchange = (secret: string) => admin(gw, 'POST', '/admin/v1/session/link', { body: { secret } })

  test('the secret is exchanged for an HttpOnly, Secure, SameSite session cookie; the site sends no Referer', async () => {
    const { accountId, linkSecret } = await createAccountless(gw.app.operator)
    const response = await exchange(linkSecret)
    expect(response.status).toBe(200)
    expect(response.headers.get('referrer-policy')).toBe('no-referrer')
    const cookie = response.headers.get('set-cookie')!
    expect(cookie).toContain('HttpOnly')
    expect(cookie).toContain('Secure')
    expect(cookie).toMatch(/SameSite=(Lax|Strict)/)
    expect(await response.json()).toMatchObject({ account: { id: accountId, kind: 'accountless' }, role: 'owner', user: null, purpose: 'link' })
    const me = await admin(gw, 'GET', '/admin/v1/me', { cookie: cookie.split(';')[0] })
    expect(me.status).toBe(200)
    expect(me.headers.get('referrer-policy')).toBe('no-referrer')
    // The page the link opens carries the same policy (the secret is in its fragment).
    expect((await gw.app.site.handle(new Request('http://site.test/dashboard'))).headers.get('referrer-policy')).toBe('no-referrer')
  })

  test('the link keeps working after the key is rotated out and revoked', async () => {
    const { accountId, keyId, linkSecret } = await createAccountless(gw.app.operator)
    const replacement = await createKey(gw.app.operator, accountId)
    await gw.app.operator.sql`UPDATE api_keys SET status = 'revoked', revoked_at = now(), replaced_by = ${replacement.id} WHERE id = ${keyId}`
    const response = await exchange(linkSecret)
    expect(response.status).toBe(200)
    expect(((await response.json()) as { account: { id: string } }).account.id).toBe(accountId)
  })

  test('the link keeps working after the account is claimed, acting as its owner', async () => {
    const { accountId, linkSecret } = await createAccountless(gw.app.operator)
    const { sql } = gw.app.operator
    await sql`INSERT INTO users (id, email) VALUES (${`usr_${accountId}`}, ${`${accountId}@people.test`})`
    await sql`INSERT INTO memberships (account_id, user_id, role) VALUES (${accountId}, ${`usr_${accountId}`}, 'owner')`
    await sql`UPDATE accounts SET kind = 'identity' WHERE id = ${accountId}`
    const response = await exchange(linkSecret)
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ account: { id: accountId, kind: 'identity' }, role: 'owner' })
  })

  test('a wrong secret is 401 naming the field; past the per-address limit, 429 with Retry-After', async () => {
    const wrong = await exchange('not-a-real-link-secret')
    expect(wrong.status).toBe(401)
    expect(((await wrong.json()) as ErrorBody).error).toMatchObject({ code: 'unauthorized', param: 'secret' })
    await exchange('still-wrong-1')
    await exchange('still-wrong-2')
    const limited = await exchange('still-wrong-3')
    expect(limited.status).toBe(429)
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/)
    expect(((await limited.json()) as ErrorBody).error.message).toContain('wrong dashboard links')
  })
})

describeWith(['postgres', 'redis'], 'dashboard link with the limit in Redis', () => {
  let gw: TestGateway
  let sibling: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'redis', database: 'postgres', env: { SIGN_IN_ATTEMPTS_PER_MINUTE: '2' } })
    sibling = await startTestGateway({ store: 'redis', database: 'postgres', sibling: gw, env: { SIGN_IN_ATTEMPTS_PER_MINUTE: '2' } })
  })
  afterAll(async () => {
    await sibling.close()
    await gw.close()
  })

  test('wrong links count across processes; a right link still opens a session past the limit', async () => {
    const wrong = (on: TestGateway) => admin(on, 'POST', '/admin/v1/session/link', { body: { secret: 'wrong' } })
    expect((await wrong(gw)).status).toBe(401)
    expect((await wrong(sibling)).status).toBe(401)
    expect((await wrong(gw)).status).toBe(429)
    const { linkSecret } = await createAccountless(gw.app.operator)
    expect((await admin(sibling, 'POST', '/admin/v1/session/link', { body: { secret: linkSecret } })).status).toBe(200)
  })
})
