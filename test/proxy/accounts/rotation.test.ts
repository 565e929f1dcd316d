// POST /keys/:id/rotate on the API server (and the admin API's, sharing one rotate function): a new key
// with the same settings, the old one accepted for 24 hours on the gateway's clock and then refused as
// 401 invalid_api_key; over the API a key rotates only itself (403 for another), a rotation or claim
// asked with a key in its grace is 403, and a second rotation (in the dashboard) 409.
import { afterAll, afterEach, beforeAll, expect, test } from 'bun:test'
import { showAccount } from '../../../proxy/accounts/accounts.ts'
import { listKeys, readKey, updateKey } from '../../../proxy/accounts/keys.ts'
import { readAccountSeed } from '../../../proxy/stores/admission/load-account.ts'
import { admin, sessionFor } from '../../helpers/admin.ts'
import { startTestGateway, type TestGateway } from '../../helpers/gateway.ts'
import { describeWith } from '../../helpers/services.ts'

const hello = [{ role: 'user', content: 'hello' }]
const HOUR = 3_600_000
type Json = Record<string, any>

describeWith('postgres', 'key rotation', () => {
  let gw: TestGateway
  let accountId: string
  const realNow = () => Date.now()
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres' })
    accountId = await gw.account('10')
  })
  afterEach(() => {
    gw.app.operator.clock.now = realNow
  })
  afterAll(() => gw?.close())

  async function rotate(
    key: string | undefined,
    keyId: string,
  ): Promise<{ status: number; body: Json; headers: Headers }> {
    const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {}
    const response = await gw.app.api.handle(
      new Request(`http://gateway.test/keys/${keyId}/rotate`, { method: 'POST', headers }),
    )
    return {
      status: response.status,
      body: (await response.json()) as Json,
      headers: response.headers,
    }
  }
  const chat = async (key: string) => {
    const response = await gw.chat(key, { model: 'test/cheap', messages: hello })
    return {
      status: response.status,
      code: ((await response.json()) as Json).error?.code as string | undefined,
    }
  }

  test('the old key works for 24 hours on the injected clock, then gets 401; the new key works', async () => {
    const start = Date.now()
    gw.app.operator.clock.now = () => start
    expect(gw.app.gateway.clock).toBe(gw.app.operator.clock)
    const old = await gw.key(accountId, {
      name: 'prod',
      rpmLimit: 77,
      allowedModels: ['test/cheap'],
    })
    const rotated = await rotate(old.key, old.id)
    expect(rotated.status).toBe(201)
    expect(rotated.body.key).toMatch(/^svc-live-[1-9A-HJ-NP-Za-km-z]{26}$/)
    expect(rotated.body).toEqual({
      key: rotated.body.key,
      id: expect.stringMatching(/^key_/),
      prefix: rotated.body.key.slice(0, 14),
      oldKey: { id: old.id, expiresAt: new Date(start + 24 * HOUR).toISOString() },
    })
    const [copy] = await gw.app.operator
      .sql`SELECT name, rpm_limit, allowed_models FROM api_keys WHERE id = ${rotated.body.id}`
    expect(copy).toEqual({ name: 'prod', rpm_limit: 77, allowed_models: ['test/cheap'] })

    expect(await chat(old.key)).toEqual({ status: 200, code: undefined })
    expect(await chat(rotated.body.key)).toEqual({ status: 200, code: undefined })
    gw.app.operator.clock.now = () => start + 24 * HOUR - 1
    expect((await chat(old.key)).status).toBe(200)
    gw.app.operator.clock.now = () => start + 24 * HOUR
    expect(await chat(old.key)).toEqual({ status: 401, code: 'invalid_api_key' })
    expect(await chat(rotated.body.key)).toEqual({ status: 200, code: undefined })
  })

  test("a rotated key and its replacement share the key's spend and rate windows, so rotating again never adds to a cap", async () => {
    // A request is held for USD 0.002 and charged far less: room for a few requests a day, and the
    // rotations must not give the new keys a fresh day.
    const cap = 2_100_000
    const old = await gw.key(accountId, { dailyLimitNano: cap })
    const spendUntilRefused = async (key: string) => {
      for (let i = 0; i < 20; i++) {
        const answer = await chat(key)
        if (answer.status !== 200) return { ...answer, served: i }
      }
      throw new Error('never refused')
    }
    const refused = await spendUntilRefused(old.key)
    expect(refused).toMatchObject({ status: 403, code: 'spend_limit_exceeded' })
    expect(refused.served).toBeGreaterThan(0)
    const first = await rotate(old.key, old.id)
    expect(first.status).toBe(201)
    expect(await chat(first.body.key)).toEqual({ status: 403, code: 'spend_limit_exceeded' })
    const second = await rotate(first.body.key, first.body.id)
    expect(second.status).toBe(201)
    for (const key of [old.key, first.body.key, second.body.key])
      expect(await chat(key)).toEqual({ status: 403, code: 'spend_limit_exceeded' })

    // Requests per minute: six across the lineage, whichever of its keys sends them.
    const fresh = await gw.key(accountId, { rpmLimit: 6 })
    for (let i = 0; i < 3; i++) expect((await chat(fresh.key)).status).toBe(200)
    const replacement = await rotate(fresh.key, fresh.id)
    for (let i = 0; i < 3; i++) expect((await chat(replacement.body.key)).status).toBe(200)
    expect(await chat(fresh.key)).toEqual({ status: 429, code: 'usage_limit_exceeded' })
    expect(await chat(replacement.body.key)).toEqual({ status: 429, code: 'usage_limit_exceeded' })

    // The operator's account view shows the lineage's spend on each of its keys.
    const shown = new Map(
      (await showAccount(gw.app.operator, accountId)).keys.map((key) => [key.id, key.daily]),
    )
    const spent = shown.get(old.id)!.spentNano
    expect(spent).toBeGreaterThan(0)
    expect(spent).toBeLessThanOrEqual(cap)
    for (const id of [first.body.id, second.body.id]) expect(shown.get(id)!.spentNano).toBe(spent)
  })

  test("a limit changed on one key of a lineage is the lineage's: the key in its grace is held to it too", async () => {
    const old = await gw.key(accountId, {
      name: 'leaked',
      rpmLimit: 50,
      dailyLimitNano: 900_000_000,
    })
    const rotated = await rotate(old.key, old.id)
    expect(rotated.status).toBe(201)
    const other = await gw.key(accountId, { rpmLimit: 50 })
    // The owner lowers the caps of the key they now use; the old one is still in its grace.
    await updateKey(gw.app.operator, rotated.body.id, { rpmLimit: 2, dailyLimitNano: 800_000_000 })
    const keys = new Map(
      (await listKeys(gw.app.operator, accountId)).keys.map((key) => [key.id, key]),
    )
    for (const id of [old.id, rotated.body.id])
      expect(keys.get(id)).toMatchObject({ rpmLimit: 2, dailyLimitNano: 800_000_000 })
    // A key outside the lineage keeps its own.
    expect(keys.get(other.id)).toMatchObject({ rpmLimit: 50 })
    for (let i = 0; i < 2; i++) expect((await chat(rotated.body.key)).status).toBe(200)
    // Before, the old key went on to 50 requests a minute on the lineage's window.
    expect(await chat(old.key)).toEqual({ status: 429, code: 'usage_limit_exceeded' })
    // A name stays the key's own.
    await updateKey(gw.app.operator, rotated.body.id, { name: 'renamed' })
    expect((await readKey(gw.app.operator, old.id)).name).toBe('leaked')
  })

  test("a store loaded from Postgres counts a lineage's charges, whichever of its keys made them, in one spend window", async () => {
    const account = await gw.account('10')
    const old = await gw.key(account)
    expect((await chat(old.key)).status).toBe(200)
    const rotated = await rotate(old.key, old.id)
    expect((await chat(rotated.body.key)).status).toBe(200)
    await gw.app.gateway.writer.drain()
    const charges = await gw.app.operator.sql<{ key_id: string; nano: number }[]>`
      SELECT key_id, -amount_nano AS nano FROM ledger WHERE account_id = ${account} AND kind = 'charge'`
    // The ledger names the key that made each charge.
    expect(charges.map((row) => row.key_id).sort()).toEqual([old.id, rotated.body.id].sort())
    const total = charges.reduce((sum, row) => sum + Number(row.nano), 0)
    const seed = await readAccountSeed(gw.app.operator.sql, account)
    expect(seed.keySpend).toEqual([{ keyId: old.id, daySpentNano: total, monthSpentNano: total }])
  })

  test('a key rotates only itself: another key of the account, or of another account, is 403 and stays as it was', async () => {
    const restricted = await gw.key(accountId, { allowedModels: ['test/cheap'], rpmLimit: 5 })
    const broad = await gw.key(accountId)
    const refused = await rotate(restricted.key, broad.id)
    expect(refused.status).toBe(403)
    expect(refused.body.error).toMatchObject({ code: 'forbidden', type: 'permission_error' })
    expect(refused.body.error.message).toBe(
      `A key can rotate only itself: call POST /keys/${restricted.id}/rotate with it, or rotate ${broad.id} with ${broad.id} itself or in the dashboard.`,
    )
    expect(refused.body.key).toBeUndefined()
    const stranger = await gw.key(await gw.account('1'))
    expect((await rotate(stranger.key, broad.id)).status).toBe(403)
    const [row] = await gw.app.operator.sql<
      { expires_at: Date | null }[]
    >`SELECT expires_at FROM api_keys WHERE id = ${broad.id}`
    expect(row!.expires_at).toBeNull()
    expect((await chat(broad.key)).status).toBe(200)
    expect((await rotate(broad.key, broad.id)).status).toBe(201)
  })

  test('a key already rotated or revoked is not rotated again in the dashboard: 409 naming its replacement', async () => {
    const { cookie } = await sessionFor(gw, accountId, 'admin')
    const key = await gw.key(accountId)
    const once = await rotate(key.key, key.id)
    const twice = await admin(gw, 'POST', `/admin/v1/keys/${key.id}/rotate`, { cookie })
    expect(twice.status).toBe(409)
    const error = ((await twice.json()) as Json).error
    expect(error.code).toBe('conflict')
    expect(error.message).toContain(once.body.id)

    const revoked = await gw.key(accountId)
    await gw.app.operator.sql`UPDATE api_keys SET status = 'revoked' WHERE id = ${revoked.id}`
    expect((await rotate(revoked.key, revoked.id)).status).toBe(401)
    const again = await admin(gw, 'POST', `/admin/v1/keys/${revoked.id}/rotate`, { cookie })
    expect(((await again.json()) as Json).error.code).toBe('conflict')
  })

  test('a key in its grace makes API calls but rotates no key and claims nothing: 403', async () => {
    const leaked = await gw.key(accountId)
    const replaced = await rotate(leaked.key, leaked.id)
    const other = await gw.key(accountId)
    for (const target of [replaced.body.id, other.id]) {
      const refused = await rotate(leaked.key, target)
      expect(refused.status).toBe(403)
      expect(refused.body.error).toMatchObject({ code: 'forbidden', type: 'permission_error' })
      expect(refused.body.error.message).toBe(
        `Key ${leaked.id} was rotated out: it makes API calls until ${replaced.body.oldKey.expiresAt}, but cannot rotate keys or claim the account. Use the key that replaced it.`,
      )
    }
    const claim = await gw.app.api.handle(
      new Request('http://gateway.test/me/claim', {
        method: 'POST',
        headers: { authorization: `Bearer ${leaked.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'holder@people.test' }),
      }),
    )
    expect(claim.status).toBe(403)
    expect((await chat(leaked.key)).status).toBe(200)
    // The replacement is untouched: still the account's current key.
    expect((await rotate(replaced.body.key, replaced.body.id)).status).toBe(201)
  })

  test('two rotations of one key at once: one succeeds, the other is refused', async () => {
    const key = await gw.key(accountId)
    const results = await Promise.all([rotate(key.key, key.id), rotate(key.key, key.id)])
    expect(results.map((result) => result.status).sort()).toEqual([201, 409])
  })

  test('without a valid key: 401 invalid_api_key', async () => {
    const key = await gw.key(accountId)
    const refused = await rotate(undefined, key.id)
    expect(refused.status).toBe(401)
    expect(refused.body.error.code).toBe('invalid_api_key')
  })

  test('the admin API rotates with the same function: manage permission, same answer, 409 twice', async () => {
    const { cookie } = await sessionFor(gw, accountId, 'admin')
    const key = await gw.key(accountId)
    const response = await admin(gw, 'POST', `/admin/v1/keys/${key.id}/rotate`, { cookie })
    expect(response.status).toBe(201)
    const body = (await response.json()) as Json
    expect(body.oldKey.id).toBe(key.id)
    expect(Date.parse(body.oldKey.expiresAt) - Date.now()).toBeGreaterThan(23.9 * HOUR)
    expect((await chat(body.key)).status).toBe(200)
    const listed = ((await (await admin(gw, 'GET', '/admin/v1/keys', { cookie })).json()) as Json)
      .keys as Json[]
    expect(listed.find((row) => row.id === key.id)).toMatchObject({
      status: 'in_grace',
      expiresAt: body.oldKey.expiresAt,
      replacedBy: body.id,
    })
    expect((await admin(gw, 'POST', `/admin/v1/keys/${key.id}/rotate`, { cookie })).status).toBe(
      409,
    )

    const member = (await sessionFor(gw, accountId, 'member')).cookie
    expect(
      (await admin(gw, 'POST', `/admin/v1/keys/${body.id}/rotate`, { cookie: member })).status,
    ).toBe(403)
  })

  test('after the grace the list shows the old key as expired', async () => {
    const key = await gw.key(accountId)
    const rotated = await rotate(key.key, key.id)
    const later = Date.now() + 25 * HOUR
    gw.app.operator.clock.now = () => later
    // A session opened at the moved time (sessions expire on the same clock).
    const { cookie } = await sessionFor(gw, accountId, 'owner')
    const listed = ((await (await admin(gw, 'GET', '/admin/v1/keys', { cookie })).json()) as Json)
      .keys as Json[]
    expect(listed.find((row) => row.id === key.id)?.status).toBe('expired')
    expect(listed.find((row) => row.id === rotated.body.id)?.status).toBe('active')
  })
})
