// Accountless setup: the proof-of-work bot check (solved, replayed, expired, missing, forged), the two
// secrets it returns, the lower default caps of its key, and the confirmation that unlocks the top-up.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { stat } from 'node:fs/promises'
import { secretsConfirmed } from '../../../../proxy/accounts/people/accountless.ts'
import { storedSecretPath } from '../../../../proxy/stores/stored-secrets.ts'
import { admin } from '../../../helpers/admin.ts'
import { cheapBotCheck, fetchChallenge, solve, solvedPayload } from '../../../helpers/altcha.ts'
import { startTestGateway, type TestGateway } from '../../../helpers/gateway.ts'
import { describeWith } from '../../../helpers/services.ts'

type ErrorBody = { error: { code: string; message: string; param: string | null } }
type SetupBody = {
  accountId: string
  key: string
  keyId: string
  dashboardLink: string
  confirmBeforeTopUp: boolean
  warning: string
}

const setup = (gw: TestGateway, altcha: unknown) =>
  admin(gw, 'POST', '/admin/v1/setup', { body: { altcha } })
const cookieOf = (response: Response) => response.headers.get('set-cookie')!.split(';')[0]!

describeWith('postgres', 'accountless setup', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres', env: cheapBotCheck })
  })
  afterAll(() => gw.close())

  test('a solved challenge creates an account with no identity and no credit, and returns its key and dashboard link once', async () => {
    const response = await setup(gw, await solvedPayload(gw))
    expect(response.status).toBe(201)
    const body = (await response.json()) as SetupBody
    expect(body.key).toMatch(/^svc-live-[1-9A-HJ-NP-Za-km-z]{26}$/)
    expect(body.dashboardLink).toMatch(/^http:\/\/site\.test\/dashboard#link=[A-Za-z0-9_-]{43}$/)
    expect(body.confirmBeforeTopUp).toBe(true)
    expect(body.warning).toContain('nobody (not even support) can recover')
    // Worded for the person at the setup page: where to claim, not an API route.
    expect(body.warning).toContain('the Team page shows how to claim the account')
    expect(body.warning).not.toContain('POST /me/claim')
    const [account] = await gw.app.operator
      .sql`SELECT kind, dashboard_link_hash FROM accounts WHERE id = ${body.accountId}`
    expect(account!.kind).toBe('accountless')
    expect(account!.dashboard_link_hash).toHaveLength(32)
    // The key works (and the account has no credit yet).
    const chat = await gw.chat(body.key, {
      model: 'test/cheap',
      messages: [{ role: 'user', content: 'hi' }],
    })
    expect(chat.status).toBe(402)
    // The setup opened a dashboard-link session.
    const me = await (await admin(gw, 'GET', '/admin/v1/me', { cookie: cookieOf(response) })).json()
    expect(me).toMatchObject({
      account: { id: body.accountId, kind: 'accountless' },
      role: 'owner',
      via: 'link',
    })
  })

  test('the key of an accountless account gets the lower accountless spend caps by default', async () => {
    const body = (await (await setup(gw, await solvedPayload(gw))).json()) as SetupBody
    const [key] = await gw.app.operator
      .sql`SELECT daily_limit_nano, monthly_limit_nano FROM api_keys WHERE id = ${body.keyId}`
    expect(Number(key!.daily_limit_nano)).toBe(gw.app.config.accountlessKeyDailyLimitNano)
    expect(Number(key!.monthly_limit_nano)).toBe(gw.app.config.accountlessKeyMonthlyLimitNano)
    expect(gw.app.config.accountlessKeyDailyLimitNano).toBeLessThan(gw.app.config.keyDailyLimitNano)
    expect(gw.app.config.accountlessKeyMonthlyLimitNano).toBeLessThan(
      gw.app.config.keyMonthlyLimitNano,
    )
  })

  test('a solution is single use: the replay is refused', async () => {
    const payload = await solvedPayload(gw)
    expect((await setup(gw, payload)).status).toBe(201)
    const replay = await setup(gw, payload)
    expect(replay.status).toBe(403)
    const body = (await replay.json()) as ErrorBody
    expect(body.error).toMatchObject({ code: 'forbidden', param: 'altcha' })
    expect(body.error.message).toContain('already used')
  })

  test('of concurrent uses of one solution exactly one succeeds', async () => {
    const payload = await solvedPayload(gw)
    const statuses = (await Promise.all([1, 2, 3, 4].map(() => setup(gw, payload))))
      .map((response) => response.status)
      .sort()
    expect(statuses).toEqual([201, 403, 403, 403])
  })

  test('a missing or garbage payload is refused naming the field', async () => {
    const missing = await admin(gw, 'POST', '/admin/v1/setup', { body: {} })
    expect(missing.status).toBe(400)
    expect(((await missing.json()) as ErrorBody).error.param).toBe('altcha')
    for (const garbage of [
      'not base64 at all!',
      btoa('{"challenge": 1}'),
      btoa(JSON.stringify({ challenge: null, solution: null, test: true })),
    ]) {
      const response = await setup(gw, garbage)
      expect(response.status).toBe(400)
      expect(((await response.json()) as ErrorBody).error).toMatchObject({
        code: 'invalid_request',
        param: 'altcha',
      })
    }
  })

  test('a wrong solution, or a challenge this server did not sign, is refused', async () => {
    const challenge = await fetchChallenge(gw)
    const solved = JSON.parse(atob(await solve(challenge)))
    const wrong = btoa(
      JSON.stringify({
        ...solved,
        solution: {
          ...solved.solution,
          derivedKey: '00'.repeat(32),
          counter: solved.solution.counter + 1,
        },
      }),
    )
    const wrongAnswer = await setup(gw, wrong)
    expect(wrongAnswer.status).toBe(403)
    expect(((await wrongAnswer.json()) as ErrorBody).error.message).toContain(
      'the solution is wrong',
    )
    const easier = {
      ...solved,
      challenge: {
        ...solved.challenge,
        parameters: { ...solved.challenge.parameters, cost: 1, keyPrefix: '0' },
      },
    }
    const forged = await setup(gw, btoa(JSON.stringify(easier)))
    expect(forged.status).toBe(403)
    expect(((await forged.json()) as ErrorBody).error.message).toContain(
      'not issued by this server',
    )
  })

  test('without ALTCHA_HMAC_KEY the signing key is generated once under DATA_DIR, readable only by the operator', async () => {
    const file = await stat(storedSecretPath(gw.app.config.DATA_DIR, 'altchaKey'))
    expect(file.mode & 0o777).toBe(0o600)
    expect(
      (await Bun.file(storedSecretPath(gw.app.config.DATA_DIR, 'altchaKey')).text()).trim(),
    ).toBe(gw.app.admin.altchaKey)
  })

  test('the sign-in routes are described in the OpenAPI document', async () => {
    const spec = (await (await admin(gw, 'GET', '/admin/v1/openapi/json')).json()) as {
      paths: Record<string, unknown>
    }
    for (const path of [
      '/admin/v1/setup/challenge',
      '/admin/v1/setup',
      '/admin/v1/setup/confirm',
      '/admin/v1/session/link',
      '/admin/v1/auth/email',
      '/admin/v1/auth/email/confirm',
      '/admin/v1/auth/wallet/nonce',
      '/admin/v1/auth/wallet',
      '/admin/v1/team',
      '/admin/v1/team/invites',
      '/admin/v1/team/{userId}',
    ]) {
      expect(Object.keys(spec.paths)).toContain(path)
    }
  })

  describe('saving both secrets comes before the top-up', () => {
    test('the top-up step stays closed until the owner confirms both secrets are saved', async () => {
      const response = await setup(gw, await solvedPayload(gw))
      const { accountId } = (await response.json()) as SetupBody
      const cookie = cookieOf(response)
      expect(await secretsConfirmed(gw.app.operator.sql, accountId)).toBe(false)
      const partial = await admin(gw, 'POST', '/admin/v1/setup/confirm', {
        cookie,
        body: { keySaved: true },
      })
      expect(partial.status).toBe(400)
      expect(((await partial.json()) as ErrorBody).error.param).toBe('linkSaved')
      const confirmed = await admin(gw, 'POST', '/admin/v1/setup/confirm', {
        cookie,
        body: { keySaved: true, linkSaved: true },
      })
      expect(confirmed.status).toBe(200)
      expect(
        ((await confirmed.json()) as { secretsConfirmedAt: string }).secretsConfirmedAt,
      ).toMatch(/^\d{4}-/)
      expect(await secretsConfirmed(gw.app.operator.sql, accountId)).toBe(true)
    })

    test('confirming needs a session', async () => {
      expect(
        (
          await admin(gw, 'POST', '/admin/v1/setup/confirm', {
            body: { keySaved: true, linkSaved: true },
          })
        ).status,
      ).toBe(401)
    })
  })
})

describeWith('postgres', 'accountless setup with a short challenge expiry', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({
      store: 'memory',
      database: 'postgres',
      env: { ...cheapBotCheck, ALTCHA_CHALLENGE_TTL_MS: '1000' },
    })
  })
  afterAll(() => gw.close())

  test('a solution of an expired challenge is refused', async () => {
    const challenge = await fetchChallenge(gw)
    const payload = await solve(challenge)
    const expiresAtMs = (challenge.parameters.expiresAt as number) * 1000
    await Bun.sleep(Math.max(0, expiresAtMs - Date.now()) + 50)
    const response = await setup(gw, payload)
    expect(response.status).toBe(403)
    expect(((await response.json()) as ErrorBody).error.message).toContain('expired')
  })
})

describe('accountless setups per address and day (embedded stores)', () =>
  setupsPerAddress({ store: 'memory', database: 'embedded' }))
describeWith(
  ['postgres', 'redis'],
  'accountless setups per address and day (PostgreSQL and Redis)',
  () => setupsPerAddress({ store: 'redis', database: 'postgres' }),
)

function setupsPerAddress(stores: {
  store: 'memory' | 'redis'
  database: 'postgres' | 'embedded'
}) {
  let gw: TestGateway
  let siteUrl: string
  beforeAll(async () => {
    gw = await startTestGateway({
      ...stores,
      env: {
        ...cheapBotCheck,
        ACCOUNTLESS_SETUPS_PER_ADDRESS_PER_DAY: '2',
        TRUSTED_PROXIES: '127.0.0.1',
      },
    })
    siteUrl = gw.app.listen().siteUrl
  })
  afterAll(() => gw.close())

  /** A setup over HTTP from a client address behind the trusted proxy (this test's connection). */
  const setupFrom = async (address: string, altcha: string) => {
    const response = await fetch(`${siteUrl}/admin/v1/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: siteUrl, 'x-forwarded-for': address },
      body: JSON.stringify({ altcha }),
    })
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      body: (await response.json()) as ErrorBody,
    }
  }

  test('past the cap an address gets 429 with Retry-After for the rest of the day; failed checks do not count; other addresses go on', async () => {
    expect((await setupFrom('198.51.100.50', 'not-a-solution')).status).toBe(400)
    expect((await setupFrom('198.51.100.50', await solvedPayload(gw))).status).toBe(201)
    expect((await setupFrom('198.51.100.50', await solvedPayload(gw))).status).toBe(201)
    const refused = await setupFrom('198.51.100.50', await solvedPayload(gw))
    expect(refused.status).toBe(429)
    expect(refused.body.error.code).toBe('usage_limit_exceeded')
    expect(refused.body.error.message).toContain('2 a day')
    expect(Number(refused.retryAfter)).toBeGreaterThan(86_000)
    expect(Number(refused.retryAfter)).toBeLessThanOrEqual(86_400)
    expect((await setupFrom('198.51.100.51', await solvedPayload(gw))).status).toBe(201)
    const [accountless] = await gw.app.operator
      .sql`SELECT count(*)::int AS count FROM accounts WHERE kind = 'accountless'`
    expect(accountless!.count).toBe(3)
  })
}
