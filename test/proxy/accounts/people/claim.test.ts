// POST /me/claim on the API server: an accountless account gets an identity, by an e-mail address
// (confirmed through a link received by a real SMTP server) or by a signed wallet message. Keys and
// balance keep working, the dashboard link ends; a second claim is 409.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { creditAccount, showAccount } from '../../../../proxy/accounts/accounts.ts'
import { createAccountless } from '../../../../proxy/accounts/people/accountless.ts'
import { usdToNano } from '../../../../shared/money.ts'
import { admin } from '../../../helpers/admin.ts'
import { startTestGateway, type TestGateway } from '../../../helpers/gateway.ts'
import { describeWith } from '../../../helpers/services.ts'
import { newWallet, signedMessage } from '../../../helpers/siwe.ts'
import { linkIn, startSmtpServer, type TestSmtp } from '../../../helpers/smtp.ts'

type ApiError = { error: { code: string; type: string; message: string; param: string | null } }

describeWith('postgres', 'claiming an accountless account', () => {
  let gw: TestGateway
  let smtp: TestSmtp
  beforeAll(async () => {
    smtp = await startSmtpServer()
    gw = await startTestGateway({
      store: 'memory',
      database: 'postgres',
      env: {
        SMTP_URL: smtp.url,
        PUBLIC_SITE_URL: 'http://site.test',
        SIGN_IN_ATTEMPTS_PER_MINUTE: '1000',
      },
    })
  })
  afterAll(async () => {
    await gw.close()
    await smtp.close()
  })

  const claim = (key: string | undefined, body: unknown) =>
    gw.app.api.handle(
      new Request('http://gateway.test/me/claim', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(key ? { authorization: `Bearer ${key}` } : {}),
        },
        body: JSON.stringify(body),
      }),
    )
  const hello = { model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }] }

  async function accountless() {
    const created = await createAccountless(gw.app.operator)
    await creditAccount(gw.app.operator, created.accountId, usdToNano('1')!, 'test credit')
    return created
  }
  async function nonce(): Promise<string> {
    return (
      (await (await admin(gw, 'GET', '/admin/v1/auth/wallet/nonce')).json()) as { nonce: string }
    ).nonce
  }
  async function expectConflict(response: Response): Promise<void> {
    expect(response.status).toBe(409)
    expect(response.headers.get('x-service-error-code')).toBe('conflict')
    const body = (await response.json()) as ApiError
    expect(body.error.code).toBe('conflict')
    expect(body.error.message).toContain('already has an identity')
  }
  /** After a claim the key and the balance carry on; the dashboard link, a bearer secret with owner power, ends. */
  async function expectStillWorking(created: {
    accountId: string
    key: string
    linkSecret: string
  }): Promise<void> {
    expect((await gw.chat(created.key, hello)).status).toBe(200)
    expect((await showAccount(gw.app.operator, created.accountId)).balanceNano).toBeGreaterThan(0)
    const link = await admin(gw, 'POST', '/admin/v1/session/link', {
      body: { secret: created.linkSecret },
    })
    expect(link.status).toBe(401)
  }

  test('by e-mail: a confirmation link is sent; confirming it attaches the address and makes its user the owner', async () => {
    const created = await accountless()
    const email = `claim.${Date.now()}@people.test`
    const sent = await claim(created.key, { email })
    expect(sent.status).toBe(202)
    expect(await sent.json()).toMatchObject({ ok: true, accountId: created.accountId, email })
    // Nothing is attached before the link is confirmed.
    expect(
      (await gw.app.operator.sql`SELECT kind FROM accounts WHERE id = ${created.accountId}`)[0]!
        .kind,
    ).toBe('accountless')
    const link = linkIn(await smtp.next(email))
    expect(link.origin).toBe('http://site.test')
    const page = await (await gw.app.site.handle(new Request(link))).text()
    expect(page).toContain(`Attach ${email} to account ${created.accountId}`)
    const confirmed = await admin(gw, 'POST', '/admin/v1/auth/email/confirm', {
      body: { token: link.searchParams.get('token') },
    })
    expect(confirmed.status).toBe(200)
    expect(await confirmed.json()).toMatchObject({
      account: { id: created.accountId, kind: 'identity' },
      role: 'owner',
      user: { email },
      purpose: 'claim',
    })
    await expectStillWorking(created)
    await expectConflict(await claim(created.key, { email: `other.${Date.now()}@people.test` }))
  })

  test('by wallet: a signed message attaches the wallet at once', async () => {
    const created = await accountless()
    const wallet = newWallet()
    const response = await claim(created.key, {
      wallet: await signedMessage(wallet, await nonce()),
    })
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({
      ok: true,
      accountId: created.accountId,
      kind: 'identity',
      wallet: wallet.address.toLowerCase(),
    })
    await expectStillWorking(created)
    await expectConflict(
      await claim(created.key, { wallet: await signedMessage(newWallet(), await nonce()) }),
    )
    // The wallet now signs in to the claimed account.
    const signedIn = await admin(gw, 'POST', '/admin/v1/auth/wallet', {
      body: await signedMessage(wallet, await nonce()),
    })
    expect(await signedIn.json()).toMatchObject({
      account: { id: created.accountId },
      role: 'owner',
    })
  })

  test('a message naming the API server’s own domain is accepted too', async () => {
    const created = await accountless()
    const proof = await signedMessage(newWallet(), await nonce(), {
      domain: 'gateway.test',
      uri: 'http://gateway.test',
    })
    expect((await claim(created.key, { wallet: proof })).status).toBe(200)
  })

  test('a wallet that already has a user: that user gains the account as its owner', async () => {
    const wallet = newWallet()
    await admin(gw, 'POST', '/admin/v1/auth/wallet', {
      body: await signedMessage(wallet, await nonce()),
    })
    const created = await accountless()
    expect(
      (await claim(created.key, { wallet: await signedMessage(wallet, await nonce()) })).status,
    ).toBe(200)
    const memberships = await gw.app.operator.sql`
      SELECT m.role FROM memberships m JOIN users u ON u.id = m.user_id WHERE u.wallet_address = ${wallet.address.toLowerCase()}`
    expect(memberships.map((row) => row.role)).toEqual(['owner', 'owner'])
  })

  test('a claim link confirmed after the account was claimed another way is refused', async () => {
    const created = await accountless()
    const email = `late.${Date.now()}@people.test`
    expect((await claim(created.key, { email })).status).toBe(202)
    expect(
      (await claim(created.key, { wallet: await signedMessage(newWallet(), await nonce()) }))
        .status,
    ).toBe(200)
    const token = linkIn(await smtp.next(email)).searchParams.get('token')
    // The link's page says so before its button is pressed, with the way on.
    const shown = await admin(gw, 'GET', `/auth/email?token=${token}`)
    expect(shown.status).toBe(409)
    const page = await shown.text()
    expect(page).toContain('already has an identity; it cannot be claimed again')
    expect(page).not.toContain('<form')
    expect(page).toContain('<a href="/sign-in">Go to the dashboard</a>')
    const late = await admin(gw, 'POST', '/admin/v1/auth/email/confirm', { body: { token } })
    expect(late.status).toBe(409)
  })

  test('refusals use the API error shape: no key, bad body, bad wallet message', async () => {
    const noKey = await claim(undefined, { email: 'a@people.test' })
    expect(noKey.status).toBe(401)
    expect(((await noKey.json()) as ApiError).error.code).toBe('invalid_api_key')
    const created = await accountless()
    for (const [body, param, message] of [
      [{ email: 'nope' }, 'email', 'email: must be an e-mail address, such as name@example.com'],
      [{ email: 'a@people.test', wallet: {} }, 'wallet', undefined],
      [{ wallet: { message: 'x' } }, 'wallet.signature', undefined],
    ] as const) {
      const response = await claim(created.key, body)
      expect(response.status).toBe(400)
      expect(((await response.json()) as ApiError).error).toMatchObject({
        code: 'invalid_request',
        type: 'invalid_request_error',
        param,
        ...(message ? { message } : {}),
      })
    }
    const wrongDomain = await claim(created.key, {
      wallet: await signedMessage(newWallet(), await nonce(), { domain: 'evil.test' }),
    })
    expect(wrongDomain.status).toBe(400)
    expect(((await wrongDomain.json()) as ApiError).error).toMatchObject({
      code: 'invalid_request',
      param: 'wallet.message',
    })
  })
})
