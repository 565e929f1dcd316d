// Credit alerts: one e-mail (owner and admins) and one push per crossing below the threshold, however many
// charges follow; armed again by a credit; a real SMTP server and a local push service receive them.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { stat } from 'node:fs/promises'
import { creditAccount } from '../../../../proxy/accounts/accounts.ts'
import { storedSecretPath } from '../../../../proxy/stores/stored-secrets.ts'
import type { AlertSettings } from '../../../../shared/schemas/admin/alerts.ts'
import { admin, sessionFor } from '../../../helpers/admin.ts'
import { startTestGateway, testModel, type TestGateway } from '../../../helpers/gateway.ts'
import { describeWith } from '../../../helpers/services.ts'
import { startSmtpServer, type TestSmtp } from '../../../helpers/smtp.ts'
import {
  browserKeys,
  decryptPush,
  startPushService,
  verifyVapid,
  type BrowserKeys,
  type PushService,
} from './push-service.ts'

// 0.001 USD a token; the fake reports 95 prompt and 5 output tokens: 0.10 USD a request (the hold, about
// 0.2 USD, covers the 100-character prompt's byte bound).
const pricey = testModel('test/pricey', 'pricey?tokens=5&prompt=95', {
  pricing: { inputPerMTok: 1_000, outputPerMTok: 1_000 },
})

const PROMPT = 'x'.repeat(100)

describeWith(['postgres', 'redis'], 'credit alerts', () => {
  let gw: TestGateway
  let smtp: TestSmtp
  let push: PushService

  beforeAll(async () => {
    smtp = await startSmtpServer()
    push = startPushService()
    gw = await startTestGateway({
      store: 'redis',
      database: 'postgres',
      models: [pricey],
      env: {
        SMTP_URL: smtp.url,
        PUSH_ALLOW_PRIVATE_ENDPOINTS: 'true',
        VAPID_SUBJECT: 'mailto:ops@gateway.test',
        PUBLIC_SITE_URL: 'http://site.test',
      },
    })
  })
  afterAll(async () => {
    await gw.close()
    await smtp.close()
    await push.stop()
  })

  /** An account with identity: owner, admin and member with e-mail addresses; the owner's session. */
  async function identityAccount(usd: string) {
    const accountId = await gw.account(usd)
    await gw.app.operator.sql`UPDATE accounts SET kind = 'identity' WHERE id = ${accountId}`
    const owner = await sessionFor(gw, accountId, 'owner', `owner-${accountId}@people.test`)
    const adminSession = await sessionFor(gw, accountId, 'admin', `admin-${accountId}@people.test`)
    const member = await sessionFor(gw, accountId, 'member', `member-${accountId}@people.test`)
    const { key } = await gw.key(accountId)
    return { accountId, key, owner, admin: adminSession, member }
  }

  /** One request of 0.10 USD, and everything after it: settle, rows written, alert checks done. */
  async function spend(key: string) {
    const response = await gw.chat(key, {
      model: 'test/pricey',
      messages: [{ role: 'user', content: PROMPT }],
      max_tokens: 5,
    })
    expect(response.status).toBe(200)
    await response.arrayBuffer()
    await gw.app.gateway.inflight.ended(response.headers.get('x-request-id')!)
    await gw.app.gateway.writer.drain()
    await gw.app.admin.alerts.idle()
  }

  const mailsTo = (address: string) =>
    smtp.messages.filter((message) => message.to.includes(address))

  async function subscribe(cookie: string, path: string): Promise<BrowserKeys> {
    const keys = browserKeys()
    const response = await admin(gw, 'POST', '/admin/v1/alerts/push-subscriptions', {
      cookie,
      body: {
        endpoint: `${push.url}${path}`,
        expirationTime: null,
        keys: { p256dh: keys.p256dh, auth: keys.auth },
      },
    })
    expect(response.status).toBe(201)
    return keys
  }

  test('one e-mail and one push per crossing under several charges, armed again by a credit', async () => {
    const account = await identityAccount('1')
    const put = await admin(gw, 'PUT', '/admin/v1/alerts', {
      cookie: account.owner.cookie,
      body: { thresholdUsd: '0.75', email: true, push: true },
    })
    expect(put.status).toBe(200)
    expect((await put.json()) as AlertSettings).toMatchObject({
      eligible: true,
      thresholdUsd: '0.75',
      thresholdNano: 750_000_000,
      armed: true,
    })
    const browser = await subscribe(account.member.cookie, `/push/${account.accountId}`)
    await subscribe(account.owner.cookie, `/gone/${account.accountId}`)
    const pushes = () =>
      push.messages.filter((message) => message.path === `/push/${account.accountId}`)
    const ownerMail = `owner-${account.accountId}@people.test`
    const adminMail = `admin-${account.accountId}@people.test`

    await spend(account.key) // 0.90
    await spend(account.key) // 0.80
    expect(mailsTo(ownerMail)).toHaveLength(0)
    expect(pushes()).toHaveLength(0)
    await spend(account.key) // 0.70: below 0.75
    await spend(account.key) // 0.60
    await spend(account.key) // 0.50
    expect(mailsTo(ownerMail)).toHaveLength(1)
    expect(mailsTo(adminMail)).toHaveLength(1)
    expect(mailsTo(`member-${account.accountId}@people.test`)).toHaveLength(0)
    expect(mailsTo(ownerMail)[0]!.text).toContain('$0.7,')
    expect(pushes()).toHaveLength(1)

    // The push message: encrypted for this browser, signed with the service's VAPID key.
    const message = pushes()[0]!
    expect(message.headers['content-encoding']).toBe('aes128gcm')
    expect(message.headers.ttl).toBe('86400')
    const vapid = await verifyVapid(message.headers.authorization!)
    expect(vapid.publicKey).toBe(gw.app.admin.alerts.vapidPublicKey)
    expect(vapid.claims.aud).toBe(push.url)
    expect(vapid.claims.sub).toBe('mailto:ops@gateway.test')
    const payload = JSON.parse(decryptPush(message.body, browser)) as Record<string, string>
    expect(payload).toMatchObject({
      type: 'credit_alert',
      accountId: account.accountId,
      balanceUsd: '0.7',
      thresholdUsd: '0.75',
      url: 'http://site.test',
    })

    // The subscription whose service answered 410 is gone; the other stays.
    const endpoints = await gw.app.operator.sql<
      { endpoint: string }[]
    >`SELECT endpoint FROM push_subscriptions WHERE account_id = ${account.accountId}`
    expect(endpoints.map((row) => row.endpoint)).toEqual([`${push.url}/push/${account.accountId}`])
    const settings = (await (
      await admin(gw, 'GET', '/admin/v1/alerts', { cookie: account.member.cookie })
    ).json()) as AlertSettings
    expect(settings).toMatchObject({ armed: false, pushSubscriptions: 1 })

    // A credit that does not reach the threshold does not arm it; one that does, does.
    await creditAccount(gw.app.operator, account.accountId, 100_000_000, 'test') // 0.60
    expect(
      (
        await gw.app.operator.sql<
          { alert_armed: boolean }[]
        >`SELECT alert_armed FROM accounts WHERE id = ${account.accountId}`
      )[0]!.alert_armed,
    ).toBe(false)
    await creditAccount(gw.app.operator, account.accountId, 200_000_000, 'test') // 0.80
    expect(
      (
        await gw.app.operator.sql<
          { alert_armed: boolean }[]
        >`SELECT alert_armed FROM accounts WHERE id = ${account.accountId}`
      )[0]!.alert_armed,
    ).toBe(true)
    await spend(account.key) // 0.70: the second crossing
    await spend(account.key) // 0.60
    expect(mailsTo(ownerMail)).toHaveLength(2)
    expect(pushes()).toHaveLength(2)
    expect(
      push.messages.filter((message) => message.path === `/gone/${account.accountId}`),
    ).toHaveLength(1)
  })

  test('two checks racing for one crossing send once', async () => {
    const account = await identityAccount('1')
    await admin(gw, 'PUT', '/admin/v1/alerts', {
      cookie: account.owner.cookie,
      body: { thresholdUsd: '0.95', email: true, push: false },
    })
    const response = await gw.chat(account.key, {
      model: 'test/pricey',
      messages: [{ role: 'user', content: PROMPT }],
      max_tokens: 5,
    })
    await response.arrayBuffer()
    await gw.app.gateway.inflight.ended(response.headers.get('x-request-id')!)
    await Promise.all([
      gw.app.admin.alerts.check([account.accountId]),
      gw.app.admin.alerts.check([account.accountId]),
      gw.app.admin.alerts.check([account.accountId]),
    ])
    await gw.app.gateway.writer.drain()
    await gw.app.admin.alerts.idle()
    expect(mailsTo(`owner-${account.accountId}@people.test`)).toHaveLength(1)
  })

  test('a threshold the balance is already below sends nothing until a credit lifts it over', async () => {
    const account = await identityAccount('0.5')
    const put = await admin(gw, 'PUT', '/admin/v1/alerts', {
      cookie: account.owner.cookie,
      body: { thresholdUsd: '1', email: true, push: true },
    })
    expect(((await put.json()) as AlertSettings).armed).toBe(false)
    await spend(account.key)
    expect(mailsTo(`owner-${account.accountId}@people.test`)).toHaveLength(0)
    await creditAccount(gw.app.operator, account.accountId, 1_000_000_000, 'test') // 1.40
    await spend(account.key) // 1.30
    await spend(account.key) // 1.20
    await spend(account.key) // 1.10
    await spend(account.key) // 1.00: not below
    expect(mailsTo(`owner-${account.accountId}@people.test`)).toHaveLength(0)
    await spend(account.key) // 0.90
    expect(mailsTo(`owner-${account.accountId}@people.test`)).toHaveLength(1)
  })

  test('channels turned off send nothing; a null threshold turns the alert off', async () => {
    const account = await identityAccount('1')
    await subscribe(account.owner.cookie, `/push/off-${account.accountId}`)
    await admin(gw, 'PUT', '/admin/v1/alerts', {
      cookie: account.owner.cookie,
      body: { thresholdUsd: '0.95', email: false, push: true },
    })
    await spend(account.key)
    expect(mailsTo(`owner-${account.accountId}@people.test`)).toHaveLength(0)
    expect(
      push.messages.filter((message) => message.path === `/push/off-${account.accountId}`),
    ).toHaveLength(1)
    const off = await admin(gw, 'PUT', '/admin/v1/alerts', {
      cookie: account.owner.cookie,
      body: { thresholdUsd: null, email: true, push: true },
    })
    expect((await off.json()) as AlertSettings).toMatchObject({
      thresholdUsd: null,
      thresholdNano: null,
      armed: true,
    })
    await spend(account.key)
    expect(mailsTo(`owner-${account.accountId}@people.test`)).toHaveLength(0)
  })

  test('accountless accounts have no alerts: read as not eligible, changes refused', async () => {
    const accountId = await gw.account('1')
    const { cookie } = await sessionFor(gw, accountId)
    const read = (await (
      await admin(gw, 'GET', '/admin/v1/alerts', { cookie })
    ).json()) as AlertSettings
    expect(read).toMatchObject({ eligible: false, thresholdUsd: null })
    const put = await admin(gw, 'PUT', '/admin/v1/alerts', {
      cookie,
      body: { thresholdUsd: '5', email: true, push: true },
    })
    expect(put.status).toBe(403)
    expect(((await put.json()) as { error: { message: string } }).error.message).toContain(
      'accounts with identity',
    )
    const keys = browserKeys()
    const subscribe = await admin(gw, 'POST', '/admin/v1/alerts/push-subscriptions', {
      cookie,
      body: { endpoint: `${push.url}/push/x`, keys: { p256dh: keys.p256dh, auth: keys.auth } },
    })
    expect(subscribe.status).toBe(403)
  })

  test('who may do what: members read and subscribe, owner and admins change settings', async () => {
    const account = await identityAccount('1')
    const body = { thresholdUsd: '2', email: true, push: true }
    expect(
      (await admin(gw, 'PUT', '/admin/v1/alerts', { cookie: account.member.cookie, body })).status,
    ).toBe(403)
    expect(
      (await admin(gw, 'PUT', '/admin/v1/alerts', { cookie: account.admin.cookie, body })).status,
    ).toBe(200)
    expect((await admin(gw, 'GET', '/admin/v1/alerts')).status).toBe(401)
    const key = (await (
      await admin(gw, 'GET', '/admin/v1/alerts/vapid-public-key', { cookie: account.member.cookie })
    ).json()) as { publicKey: string }
    expect(key.publicKey).toBe(gw.app.admin.alerts.vapidPublicKey)
    // Another account cannot remove this account's subscription.
    const endpoint = `${push.url}/push/mine-${account.accountId}`
    const keys = browserKeys()
    await admin(gw, 'POST', '/admin/v1/alerts/push-subscriptions', {
      cookie: account.member.cookie,
      body: { endpoint, keys: { p256dh: keys.p256dh, auth: keys.auth } },
    })
    const other = await identityAccount('1')
    const query = `?endpoint=${encodeURIComponent(endpoint)}`
    expect(
      (
        await admin(gw, 'DELETE', `/admin/v1/alerts/push-subscriptions${query}`, {
          cookie: other.owner.cookie,
        })
      ).status,
    ).toBe(404)
    expect(
      (
        await admin(gw, 'DELETE', `/admin/v1/alerts/push-subscriptions${query}`, {
          cookie: account.member.cookie,
        })
      ).status,
    ).toBe(200)
    // Suspended: settings can still be read, not changed.
    await gw.app.operator
      .sql`UPDATE accounts SET status = 'suspended' WHERE id = ${account.accountId}`
    expect(
      (await admin(gw, 'GET', '/admin/v1/alerts', { cookie: account.owner.cookie })).status,
    ).toBe(200)
    expect(
      (await admin(gw, 'PUT', '/admin/v1/alerts', { cookie: account.owner.cookie, body })).status,
    ).toBe(403)
  })

  test('bad settings and subscriptions are refused by field', async () => {
    const account = await identityAccount('1')
    const cookie = account.owner.cookie
    for (const [body, param] of [
      [{ thresholdUsd: '0', email: true, push: true }, 'thresholdUsd'],
      [{ thresholdUsd: '-1', email: true, push: true }, 'thresholdUsd'],
      [{ thresholdUsd: '1', email: true }, 'push'],
    ] as const) {
      const response = await admin(gw, 'PUT', '/admin/v1/alerts', { cookie, body })
      expect(response.status).toBe(400)
      expect(((await response.json()) as { error: { param: string } }).error.param).toBe(param)
    }
    const keys = browserKeys()
    const bad = await admin(gw, 'POST', '/admin/v1/alerts/push-subscriptions', {
      cookie,
      body: { endpoint: `${push.url}/p`, keys: { p256dh: 'AAAA', auth: keys.auth } },
    })
    expect(bad.status).toBe(400)
    expect(((await bad.json()) as { error: { param: string } }).error.param).toBe('keys.p256dh')
  })

  test('the generated VAPID key pair is kept under DATA_DIR, readable by the owner only', async () => {
    const path = storedSecretPath(gw.app.config.DATA_DIR, 'vapidKeys')
    expect((await stat(path)).mode & 0o777).toBe(0o600)
    const stored = JSON.parse(await Bun.file(path).text()) as { publicKey: string }
    expect(stored.publicKey).toBe(gw.app.admin.alerts.vapidPublicKey)
  })
})

describeWith(['postgres', 'redis'], 'credit alert deliveries', () => {
  let gw: TestGateway
  let smtp: TestSmtp

  beforeAll(async () => {
    smtp = await startSmtpServer()
    gw = await startTestGateway({
      store: 'redis',
      database: 'postgres',
      models: [pricey],
      env: {
        SMTP_URL: smtp.url,
        ALERT_RETRY_BASE_MS: '100',
        ALERT_MAX_ATTEMPTS: '3',
        PUBLIC_SITE_URL: 'http://site.test',
      },
    })
  })
  afterAll(async () => {
    await gw.close()
    await smtp.close()
  })

  async function fired(usd: string) {
    const accountId = await gw.account(usd)
    await gw.app.operator.sql`UPDATE accounts SET kind = 'identity' WHERE id = ${accountId}`
    const owner = await sessionFor(gw, accountId, 'owner', `owner-${accountId}@people.test`)
    const { key } = await gw.key(accountId)
    expect(
      (
        await admin(gw, 'PUT', '/admin/v1/alerts', {
          cookie: owner.cookie,
          body: { thresholdUsd: '0.95', email: true, push: false },
        })
      ).status,
    ).toBe(200)
    const response = await gw.chat(key, {
      model: 'test/pricey',
      messages: [{ role: 'user', content: PROMPT }],
      max_tokens: 5,
    })
    await response.arrayBuffer()
    await gw.app.gateway.inflight.ended(response.headers.get('x-request-id')!)
    await gw.app.gateway.writer.drain()
    await gw.app.admin.alerts.idle()
    const settings = async () =>
      (await (
        await admin(gw, 'GET', '/admin/v1/alerts', { cookie: owner.cookie })
      ).json()) as AlertSettings
    return { accountId, address: `owner-${accountId}@people.test`, settings }
  }
  const retryDue = async () => {
    await Bun.sleep(450)
    await gw.app.admin.alerts.deliver()
  }

  test('a mail the server refuses is not lost: tried again after a pause, sent once it is accepted', async () => {
    smtp.refusing(1)
    const alert = await fired('1')
    expect(smtp.messages.filter((message) => message.to.includes(alert.address))).toHaveLength(0)
    const waiting = await alert.settings()
    expect(waiting.mailDelivery).toBe('smtp')
    expect(waiting.deliveries).toMatchObject([
      { channel: 'email', to: alert.address, state: 'pending', attempts: 1 },
    ])
    expect(waiting.deliveries[0]!.lastError).toContain('451')
    // Before its pause is over nothing is tried again.
    await gw.app.admin.alerts.deliver()
    expect((await alert.settings()).deliveries[0]!.attempts).toBe(1)
    await retryDue()
    await smtp.next(alert.address)
    expect((await alert.settings()).deliveries).toMatchObject([
      { state: 'sent', attempts: 2, lastError: null },
    ])
    // Sent is sent: nothing more goes out.
    await retryDue()
    expect(smtp.messages.filter((message) => message.to.includes(alert.address))).toHaveLength(1)
  })

  test('after the last attempt a delivery is failed, and the dashboard says so', async () => {
    smtp.refusing(Number.POSITIVE_INFINITY)
    try {
      const alert = await fired('1')
      await retryDue()
      await Bun.sleep(300)
      await retryDue()
      const settings = await alert.settings()
      expect(settings.deliveries).toMatchObject([{ state: 'failed', attempts: 3, sentAt: null }])
      expect(settings.deliveries[0]!.lastError).toContain('451')
    } finally {
      smtp.refusing(0)
    }
  })

  test('another process sends what one left: a claim that ran out is taken over', async () => {
    const alert = await fired('1')
    await smtp.next(alert.address)
    const { sql } = gw.app.operator
    // A delivery claimed by a process that died before sending it: pending, its claim over.
    await sql`UPDATE alert_deliveries SET state = 'pending', sent_at = NULL, next_attempt_at = now() - interval '1 second' WHERE account_id = ${alert.accountId}`
    const sibling = await startTestGateway({
      store: 'redis',
      database: 'postgres',
      models: [pricey],
      sibling: gw,
      env: { SMTP_URL: smtp.url },
    })
    try {
      await Promise.all([sibling.app.admin.alerts.deliver(), gw.app.admin.alerts.deliver()])
      await smtp.next(alert.address)
      await Bun.sleep(100)
      expect(smtp.messages.filter((message) => message.to.includes(alert.address))).toHaveLength(2)
    } finally {
      await sibling.close()
    }
  })

  test('e-mail alerts need someone with an e-mail address to send them to', async () => {
    const accountId = await gw.account('1')
    await gw.app.operator.sql`UPDATE accounts SET kind = 'identity' WHERE id = ${accountId}`
    const owner = await sessionFor(gw, accountId, 'owner')
    await gw.app.operator
      .sql`UPDATE users SET email = NULL, wallet_address = ${`0x${'ab'.repeat(20)}`} WHERE id = ${owner.userId}`
    const refused = await admin(gw, 'PUT', '/admin/v1/alerts', {
      cookie: owner.cookie,
      body: { thresholdUsd: '1', email: true, push: false },
    })
    expect(refused.status).toBe(400)
    expect(((await refused.json()) as { error: { param: string } }).error.param).toBe('email')
    expect(
      (
        await admin(gw, 'PUT', '/admin/v1/alerts', {
          cookie: owner.cookie,
          body: { thresholdUsd: '1', email: false, push: true },
        })
      ).status,
    ).toBe(200)
  })
})

describeWith('postgres', 'credit alerts without a mail server', () => {
  test('the alert settings say mail goes to a file', async () => {
    const gw = await startTestGateway({ store: 'memory', database: 'postgres' })
    try {
      const accountId = await gw.account('1')
      await gw.app.operator.sql`UPDATE accounts SET kind = 'identity' WHERE id = ${accountId}`
      const owner = await sessionFor(gw, accountId, 'owner', `owner-${accountId}@people.test`)
      const settings = (await (
        await admin(gw, 'GET', '/admin/v1/alerts', { cookie: owner.cookie })
      ).json()) as AlertSettings
      expect(settings.mailDelivery).toBe('file')
    } finally {
      await gw.close()
    }
  })
})
