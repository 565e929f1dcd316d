// The dashboard link of an accountless account: exchanged by POST for a session cookie (HttpOnly, Secure,
// SameSite), with no Referer leaving the site; it keeps working after key rotation; replaced or revoked by
// its owner or the operator, and ended by a claim, with the sessions it opened; a wrong secret is 401, and
// past the per-address limit 429; a browser signed in to another account is not switched by a link.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createAccountless } from '../../../../proxy/accounts/people/accountless.ts'
import { attachIdentity } from '../../../../proxy/accounts/people/users.ts'
import { createKey } from '../../../../proxy/accounts/keys.ts'
import { suspendAccount } from '../../../../proxy/accounts/suspension.ts'
import { admin, sessionFor } from '../../../helpers/admin.ts'
import { startTestGateway, type TestGateway } from '../../../helpers/gateway.ts'
import { describeWith } from '../../../helpers/services.ts'

type ErrorBody = { error: { code: string; message: string; param: string | null } }

describeWith('postgres', 'dashboard link', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({
      store: 'memory',
      database: 'postgres',
      env: { SIGN_IN_ATTEMPTS_PER_MINUTE: '3' },
    })
  })
  afterAll(() => gw.close())

  const exchange = (secret: string) =>
    admin(gw, 'POST', '/admin/v1/session/link', { body: { secret } })

  test('the secret is exchanged for an HttpOnly, Secure, SameSite session cookie; the site sends no Referer', async () => {
    const { accountId, linkSecret } = await createAccountless(gw.app.operator)
    const response = await exchange(linkSecret)
    expect(response.status).toBe(200)
    expect(response.headers.get('referrer-policy')).toBe('no-referrer')
    const cookie = response.headers.get('set-cookie')!
    expect(cookie).toContain('HttpOnly')
    expect(cookie).toContain('Secure')
    expect(cookie).toMatch(/SameSite=(Lax|Strict)/)
    expect(await response.json()).toMatchObject({
      account: { id: accountId, kind: 'accountless' },
      role: 'owner',
      user: null,
      purpose: 'link',
    })
    const me = await admin(gw, 'GET', '/admin/v1/me', { cookie: cookie.split(';')[0] })
    expect(me.status).toBe(200)
    expect(me.headers.get('referrer-policy')).toBe('no-referrer')
    // The page the link opens carries the same policy (the secret is in its fragment).
    expect(
      (await gw.app.site.handle(new Request('http://site.test/dashboard'))).headers.get(
        'referrer-policy',
      ),
    ).toBe('no-referrer')
  })

  test('a browser signed in to another account is not switched by a link (409); its own account opens', async () => {
    const mine = await gw.account('1')
    const { cookie } = await sessionFor(gw, mine, 'owner', `link.${Date.now()}@people.test`)
    const { accountId, linkSecret } = await createAccountless(gw.app.operator)
    const refused = await admin(gw, 'POST', '/admin/v1/session/link', {
      cookie,
      body: { secret: linkSecret },
    })
    expect(refused.status).toBe(409)
    expect(refused.headers.get('set-cookie')).toBeNull()
    expect(((await refused.json()) as ErrorBody).error.message).toContain('sign out first')
    // The browser's session is untouched.
    const me = await admin(gw, 'GET', '/admin/v1/me', { cookie })
    expect(((await me.json()) as { account: { id: string } }).account.id).toBe(mine)
    // A session of the link's own account (the owner's other tab) may open it again.
    const own = await sessionFor(gw, accountId)
    const again = await admin(gw, 'POST', '/admin/v1/session/link', {
      cookie: own.cookie,
      body: { secret: linkSecret },
    })
    expect(again.status).toBe(200)
  })

  test('the link keeps working after the key is rotated out and revoked', async () => {
    const { accountId, keyId, linkSecret } = await createAccountless(gw.app.operator)
    const replacement = await createKey(gw.app.operator, accountId)
    await gw.app.operator
      .sql`UPDATE api_keys SET status = 'revoked', revoked_at = now(), replaced_by = ${replacement.id} WHERE id = ${keyId}`
    const response = await exchange(linkSecret)
    expect(response.status).toBe(200)
    expect(((await response.json()) as { account: { id: string } }).account.id).toBe(accountId)
  })

  test('a wrong secret is 401 naming the field; past the per-address limit, 429 with Retry-After', async () => {
    const wrong = await exchange('not-a-real-link-secret')
    expect(wrong.status).toBe(401)
    expect(((await wrong.json()) as ErrorBody).error).toMatchObject({
      code: 'unauthorized',
      param: 'secret',
    })
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
    gw = await startTestGateway({
      store: 'redis',
      database: 'postgres',
      env: { SIGN_IN_ATTEMPTS_PER_MINUTE: '2' },
    })
    sibling = await startTestGateway({
      store: 'redis',
      database: 'postgres',
      sibling: gw,
      env: { SIGN_IN_ATTEMPTS_PER_MINUTE: '2' },
    })
  })
  afterAll(async () => {
    await sibling.close()
    await gw.close()
  })

  test('wrong links count across processes; a right link still opens a session past the limit', async () => {
    const wrong = (on: TestGateway) =>
      admin(on, 'POST', '/admin/v1/session/link', { body: { secret: 'wrong' } })
    expect((await wrong(gw)).status).toBe(401)
    expect((await wrong(sibling)).status).toBe(401)
    expect((await wrong(gw)).status).toBe(429)
    const { linkSecret } = await createAccountless(gw.app.operator)
    expect(
      (await admin(sibling, 'POST', '/admin/v1/session/link', { body: { secret: linkSecret } }))
        .status,
    ).toBe(200)
  })
})

describeWith('postgres', 'dashboard link: replaced, revoked, ended by a claim', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres' })
  })
  afterAll(() => gw.close())

  const exchange = (secret: string) =>
    admin(gw, 'POST', '/admin/v1/session/link', { body: { secret } })
  const cookieOf = (response: Response) => response.headers.get('set-cookie')!.split(';')[0]!
  const operator = (method: string, accountId: string) =>
    gw.app.site.handle(
      new Request(`http://site.test/operator/v1/accounts/${accountId}/link`, {
        method,
        headers: { authorization: `Bearer ${gw.app.operatorToken}` },
      }),
    )

  test('claiming the account ends the link and the sessions it opened: its people sign in as themselves', async () => {
    const { accountId, linkSecret } = await createAccountless(gw.app.operator)
    const session = cookieOf(await exchange(linkSecret))
    const { sql } = gw.app.operator
    await sql`INSERT INTO users (id, email) VALUES (${`usr_${accountId}`}, ${`${accountId}@people.test`})`
    await sql.begin((tx) => attachIdentity(tx, accountId, `usr_${accountId}`))
    expect((await exchange(linkSecret)).status).toBe(401)
    expect((await admin(gw, 'GET', '/admin/v1/me', { cookie: session })).status).toBe(401)
    // An account with an identity has no link to replace.
    expect((await operator('POST', accountId)).status).toBe(409)
  })

  test('a link exchanged while the claim commits opens no session: the link read before the claim ended it', async () => {
    const { accountId, linkSecret } = await createAccountless(gw.app.operator)
    const { sql } = gw.app.operator
    const userId = `usr_race_${accountId}`
    await sql`INSERT INTO users (id, email) VALUES (${userId}, ${`race.${accountId}@people.test`})`
    let racing: Promise<Response> | undefined
    await sql.begin(async (tx) => {
      await attachIdentity(tx, accountId, userId)
      // The exchange still reads the link (the claim is not committed); its new session waits on the
      // claim's lock of the account row and is written once the claim has ended the others.
      racing = exchange(linkSecret)
      await Bun.sleep(300)
    })
    const response = await racing!
    expect(response.status).toBe(401)
    expect(response.headers.get('set-cookie')).toBeNull()
    expect(((await response.json()) as ErrorBody).error.code).toBe('unauthorized')
    expect(
      await sql`SELECT 1 FROM sessions WHERE account_id = ${accountId} AND user_id IS NULL`,
    ).toHaveLength(0)
  })

  test('a dashboard-link session of a claimed account opens nothing, however it came to exist', async () => {
    const { accountId } = await createAccountless(gw.app.operator)
    const { sql } = gw.app.operator
    const userId = `usr_left_${accountId}`
    await sql`INSERT INTO users (id, email) VALUES (${userId}, ${`left.${accountId}@people.test`})`
    await sql.begin((tx) => attachIdentity(tx, accountId, userId))
    const { cookie } = await sessionFor(gw, accountId)
    expect((await admin(gw, 'GET', '/admin/v1/keys', { cookie })).status).toBe(401)
  })

  test('the owner replaces the link: shown once, the old one and its other sessions end, the owner stays signed in', async () => {
    const { accountId, linkSecret } = await createAccountless(gw.app.operator)
    const mine = cookieOf(await exchange(linkSecret))
    const elsewhere = cookieOf(await exchange(linkSecret))
    const replaced = await admin(gw, 'POST', '/admin/v1/account/link', { cookie: mine })
    expect(replaced.status).toBe(200)
    const { dashboardLink } = (await replaced.json()) as { dashboardLink: string }
    expect(dashboardLink).toMatch(/^http:\/\/site\.test\/dashboard#link=[A-Za-z0-9_-]{43}$/)
    expect((await exchange(linkSecret)).status).toBe(401)
    expect((await admin(gw, 'GET', '/admin/v1/me', { cookie: elsewhere })).status).toBe(401)
    expect((await admin(gw, 'GET', '/admin/v1/me', { cookie: mine })).status).toBe(200)
    expect((await exchange(dashboardLink.split('#link=')[1]!)).status).toBe(200)
    // Revoked: the link opens nothing; the owner's own session goes on until it ends.
    expect(
      await (await admin(gw, 'DELETE', '/admin/v1/account/link', { cookie: mine })).json(),
    ).toEqual({ accountId, revoked: true })
    expect((await exchange(dashboardLink.split('#link=')[1]!)).status).toBe(401)
    expect((await admin(gw, 'GET', '/admin/v1/me', { cookie: mine })).status).toBe(200)
  })

  test('the operator replaces or revokes a link with the operator API; a member may not', async () => {
    const { accountId, linkSecret } = await createAccountless(gw.app.operator)
    const session = cookieOf(await exchange(linkSecret))
    const replaced = await operator('POST', accountId)
    expect(replaced.status).toBe(200)
    const secret = ((await replaced.json()) as { dashboardLink: string }).dashboardLink.split(
      '#link=',
    )[1]!
    expect((await admin(gw, 'GET', '/admin/v1/me', { cookie: session })).status).toBe(401)
    expect((await exchange(linkSecret)).status).toBe(401)
    expect((await exchange(secret)).status).toBe(200)
    expect((await operator('DELETE', accountId)).status).toBe(200)
    expect((await exchange(secret)).status).toBe(401)
    expect((await operator('POST', 'acct_none')).status).toBe(404)
    const team = await gw.account('1')
    const member = (await sessionFor(gw, team, 'member')).cookie
    const refused = await admin(gw, 'POST', '/admin/v1/account/link', { cookie: member })
    expect(refused.status).toBe(403)
    expect(((await refused.json()) as { error: { message: string } }).error.message).toBe(
      "Not allowed for a member: only the account owner can replace or revoke the account's dashboard link.",
    )
  })

  test('a suspended account’s owner can still replace a leaked link', async () => {
    const { accountId, linkSecret } = await createAccountless(gw.app.operator)
    const mine = cookieOf(await exchange(linkSecret))
    await suspendAccount(gw.app.operator, accountId, 'abuse')
    const replaced = await admin(gw, 'POST', '/admin/v1/account/link', { cookie: mine })
    expect(replaced.status).toBe(200)
    expect((await exchange(linkSecret)).status).toBe(401)
  })
})
