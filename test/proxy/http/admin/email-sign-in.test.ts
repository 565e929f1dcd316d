// E-mail sign-in by magic link through a real SMTP server: the same answer for known and unknown
// addresses, a confirm page that does not consume, a single-use token that expires, stored only hashed;
// and the outbox under DATA_DIR when no SMTP server is configured.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { outboxPath } from '../../../../proxy/accounts/people/mailer.ts'
import { admin } from '../../../helpers/admin.ts'
import { startTestGateway, type TestGateway } from '../../../helpers/gateway.ts'
import { describeWith } from '../../../helpers/services.ts'
import { linkIn, startSmtpServer, type TestSmtp } from '../../../helpers/smtp.ts'

type ErrorBody = { error: { code: string; message: string; param: string | null } }
type SignedIn = {
  account: { id: string; kind: string }
  role: string
  user: { id: string; email: string } | null
  purpose: string
}

let counter = 0
const newEmail = () => `person${++counter}.${Date.now()}@people.test`

describeWith('postgres', 'e-mail sign-in', () => {
  let gw: TestGateway
  let smtp: TestSmtp
  beforeAll(async () => {
    smtp = await startSmtpServer()
    gw = await startTestGateway({
      store: 'memory',
      database: 'postgres',
      env: { SMTP_URL: smtp.url, MAGIC_LINK_TTL_MS: '60000', SIGN_IN_ATTEMPTS_PER_MINUTE: '1000' },
    })
  })
  afterAll(async () => {
    await gw.close()
    await smtp.close()
  })

  const requestLink = (email: string) =>
    admin(gw, 'POST', '/admin/v1/auth/email', { body: { email } })
  const confirm = (token: string) =>
    admin(gw, 'POST', '/admin/v1/auth/email/confirm', { body: { token } })
  async function linkFor(email: string): Promise<URL> {
    expect((await requestLink(email)).status).toBe(202)
    return linkIn(await smtp.next(email))
  }

  test('known and unknown addresses get the same answer, and both get a link by SMTP', async () => {
    const known = newEmail()
    await gw.app.operator.sql`INSERT INTO users (id, email) VALUES (${`usr_${counter}`}, ${known})`
    const answers = await Promise.all([requestLink(known), requestLink(newEmail())])
    expect(answers.map((answer) => answer.status)).toEqual([202, 202])
    const [first, second] = await Promise.all(answers.map((answer) => answer.json()))
    expect(first).toEqual(second)
    const mail = await smtp.next(known)
    expect(mail.raw).toContain('Subject: Sign in to Model Gateway')
    expect(linkIn(mail).origin).toBe('http://site.test')
  })

  test('GET shows a confirm page and does not consume; POST consumes once; a reuse is refused', async () => {
    const email = newEmail()
    const link = await linkFor(email)
    const token = link.searchParams.get('token')!
    for (const _ of [1, 2]) {
      const page = await gw.app.site.handle(new Request(link))
      expect(page.status).toBe(200)
      expect(page.headers.get('content-type')).toContain('text/html')
      expect(page.headers.get('referrer-policy')).toBe('no-referrer')
      expect(page.headers.get('cache-control')).toBe('no-store')
      const html = await page.text()
      expect(html).toContain(`Sign in as ${email}`)
      expect(html).toContain('action="http://site.test/admin/v1/auth/email/confirm"')
    }
    const signedIn = await confirm(token)
    expect(signedIn.status).toBe(200)
    const body = (await signedIn.json()) as SignedIn
    // A new address: the user and an account with an identity that the user owns.
    expect(body).toMatchObject({
      account: { kind: 'identity' },
      role: 'owner',
      user: { email },
      purpose: 'sign_in',
    })
    const cookie = signedIn.headers.get('set-cookie')!
    expect(cookie).toContain('HttpOnly')
    const me = await (
      await admin(gw, 'GET', '/admin/v1/me', { cookie: cookie.split(';')[0] })
    ).json()
    expect(me).toMatchObject({ via: 'user', user: { email }, account: { id: body.account.id } })
    const reuse = await confirm(token)
    expect(reuse.status).toBe(401)
    expect(((await reuse.json()) as ErrorBody).error).toMatchObject({
      code: 'unauthorized',
      param: 'token',
    })
    // The page now says so, without a form.
    const used = await gw.app.site.handle(new Request(link))
    expect(used.status).toBe(410)
    expect(await used.text()).not.toContain('<form')
  })

  test('signing in again acts for the same account', async () => {
    const email = newEmail()
    const first = (await (
      await confirm((await linkFor(email)).searchParams.get('token')!)
    ).json()) as SignedIn
    const second = (await (
      await confirm((await linkFor(email)).searchParams.get('token')!)
    ).json()) as SignedIn
    expect(second.account.id).toBe(first.account.id)
    expect(second.user!.id).toBe(first.user!.id)
  })

  test('the confirm page’s form POST gets a redirect to the dashboard with the cookie', async () => {
    const link = await linkFor(newEmail())
    // As a browser sends it under the site's no-referrer policy: Origin null, vouched for by Sec-Fetch-Site.
    const post = (site: string) =>
      gw.app.site.handle(
        new Request('http://site.test/admin/v1/auth/email/confirm', {
          method: 'POST',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            origin: 'null',
            'sec-fetch-site': site,
          },
          body: new URLSearchParams({ token: link.searchParams.get('token')! }),
        }),
      )
    expect((await post('cross-site')).status).toBe(403)
    const response = await post('same-origin')
    expect(response.status).toBe(303)
    expect(response.headers.get('location')).toBe('http://site.test/dashboard')
    expect(response.headers.get('set-cookie')).toContain('HttpOnly')
    // A used link posted again: a page naming the refusal, not JSON.
    const again = await post('same-origin')
    expect(again.status).toBe(401)
    expect(again.headers.get('content-type')).toContain('text/html')
    expect(await again.text()).toContain('unknown, expired or already used')
  })

  test('the link carries the dashboard page the sign-in was asked from, and the form POST lands there', async () => {
    const email = newEmail()
    const asked = await admin(gw, 'POST', '/admin/v1/auth/email', {
      body: { email, next: '/dashboard/billing?tab=top-up' },
    })
    expect(asked.status).toBe(202)
    const link = linkIn(await smtp.next(email))
    expect(link.searchParams.get('next')).toBe('/dashboard/billing?tab=top-up')
    const page = await (await gw.app.site.handle(new Request(link.href))).text()
    expect(page).toContain(
      '<input type="hidden" name="next" value="/dashboard/billing?tab=top-up">',
    )
    const post = (fields: Record<string, string>) =>
      gw.app.site.handle(
        new Request('http://site.test/admin/v1/auth/email/confirm', {
          method: 'POST',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            origin: 'null',
            'sec-fetch-site': 'same-origin',
          },
          body: new URLSearchParams(fields),
        }),
      )
    const landed = await post({
      token: link.searchParams.get('token')!,
      next: '/dashboard/billing?tab=top-up',
    })
    expect(landed.status).toBe(303)
    expect(landed.headers.get('location')).toBe('http://site.test/dashboard/billing?tab=top-up')
    // Never another site: a page that is not the dashboard's is dropped, from the link and at the POST.
    for (const next of [
      'https://elsewhere.test/dashboard',
      '//elsewhere.test/dashboard',
      '/dashboard\\..\\x',
      '/admin/v1/keys',
    ]) {
      const other = newEmail()
      expect(
        (await admin(gw, 'POST', '/admin/v1/auth/email', { body: { email: other, next } })).status,
      ).toBe(202)
      const otherLink = linkIn(await smtp.next(other))
      expect(otherLink.searchParams.get('next')).toBeNull()
      const shown = await (
        await gw.app.site.handle(new Request(`${otherLink.href}&next=${encodeURIComponent(next)}`))
      ).text()
      expect(shown).not.toContain('name="next"')
      const response = await post({ token: otherLink.searchParams.get('token')!, next })
      expect(response.headers.get('location')).toBe('http://site.test/dashboard')
    }
  })

  test('an expired link is refused, by the page and by the POST', async () => {
    const link = await linkFor(newEmail())
    const clock = gw.app.operator.clock
    const real = clock.now
    clock.now = () => real() + 61_000
    try {
      expect((await gw.app.site.handle(new Request(link))).status).toBe(410)
      expect((await confirm(link.searchParams.get('token')!)).status).toBe(401)
    } finally {
      clock.now = real
    }
  })

  test('the token is stored only as its hash: no column of any table holds it', async () => {
    const link = await linkFor(newEmail())
    const token = link.searchParams.get('token')!
    const { sql } = gw.app.operator
    const [row] =
      await sql`SELECT token_hash FROM email_tokens WHERE token_hash = sha256(${token}::bytea)`
    expect(row).toBeDefined()
    const tables = await sql<{ table_name: string }[]>`
      SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`
    for (const { table_name } of tables) {
      const rows = await sql.unsafe(`SELECT t::text AS row FROM ${table_name} t`)
      for (const { row: text } of rows) expect(text as string).not.toContain(token)
    }
    // The link is still good: the check itself did not consume it.
    expect((await confirm(token)).status).toBe(200)
  })

  test('a malformed address is refused naming the field; past the per-recipient limit, 429', async () => {
    const bad = await requestLink('not an address')
    expect(bad.status).toBe(400)
    expect(((await bad.json()) as ErrorBody).error.param).toBe('email')
    const email = newEmail()
    const answers = []
    for (let attempt = 0; attempt < 4; attempt++) answers.push(await requestLink(email))
    expect(answers.map((answer) => answer.status)).toEqual([202, 202, 202, 429])
    expect(((await answers[3]!.json()) as ErrorBody).error.message).toContain(
      'mails to this address',
    )
  })
})

describeWith('postgres', 'e-mail sign-in without SMTP', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres' })
  })
  afterAll(() => gw.close())

  test('the link goes to the outbox under DATA_DIR, which the operator can read', async () => {
    const email = newEmail()
    expect(gw.app.admin.mailer.kind).toBe('outbox')
    expect((await admin(gw, 'POST', '/admin/v1/auth/email', { body: { email } })).status).toBe(202)
    const lines = (await Bun.file(outboxPath(gw.app.config.DATA_DIR)).text()).trim().split('\n')
    const mail = JSON.parse(lines.at(-1)!) as { to: string; subject: string; text: string }
    expect(mail).toMatchObject({ to: email, subject: 'Sign in to Model Gateway' })
    const token = /\/auth\/email\?token=([A-Za-z0-9_-]+)/.exec(mail.text)![1]!
    const signedIn = await admin(gw, 'POST', '/admin/v1/auth/email/confirm', { body: { token } })
    expect(signedIn.status).toBe(200)
  })
})
