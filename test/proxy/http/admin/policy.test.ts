// The admin API's policy routes: presets, guardrails and routing restrictions of the session's account,
// read by every member, changed by owner and admins, never another account's; a change applies to the
// next API request.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { admin, sessionFor } from '../../../helpers/admin.ts'
import { startTestGateway, type TestGateway } from '../../../helpers/gateway.ts'
import { holdsEnded } from '../../../helpers/ledger.ts'
import { describeWith } from '../../../helpers/services.ts'

type Json = Record<string, any>
const hello = [{ role: 'user', content: 'hello' }]

describeWith('postgres', 'admin policy routes', () => {
  let gw: TestGateway
  let accountId: string
  let owner: string
  let key: string
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres' })
    accountId = await gw.account('10')
    owner = (await sessionFor(gw, accountId, 'owner')).cookie
    key = (await gw.key(accountId)).key
  })
  afterAll(() => gw?.close())

  const call = async (method: string, path: string, cookie: string, body?: unknown) => {
    const response = await admin(gw, method, `/admin/v1${path}`, { cookie, body })
    return { status: response.status, body: (await response.json()) as Json }
  }
  const served = async (model: string) => {
    const response = await gw.chat(key, { model, messages: hello })
    return { status: response.status, model: response.headers.get('x-service-model') }
  }

  test('presets: created (201), replaced (200), used by the next request, listed, deleted', async () => {
    expect(
      (
        await call('PUT', '/presets/writer', owner, {
          model: 'test/other',
          params: { temperature: 0.3 },
        })
      ).status,
    ).toBe(201)
    expect(await served('@preset/writer')).toEqual({ status: 200, model: 'test/other' })
    const replaced = await call('PUT', '/presets/writer', owner, { model: 'test/cheap' })
    expect(replaced).toMatchObject({
      status: 200,
      body: { slug: 'writer', id: '@preset/writer', model: 'test/cheap', params: {} },
    })
    expect(await served('@preset/writer')).toEqual({ status: 200, model: 'test/cheap' })
    const listed = await call('GET', '/presets', owner)
    expect(listed.body.presets.map((preset: Json) => preset.slug)).toEqual(['writer'])
    expect(listed.body.baseUrl).toStartWith('http://site.test:')
    const bad = await call('PUT', '/presets/writer', owner, { model: 'test/nope' })
    expect(bad).toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_request', param: 'model' } },
    })
    // Refusals name a field by the label the dashboard's form shows for it.
    expect(
      (
        await call('PUT', '/presets/writer', owner, {
          model: 'test/cheap',
          params: { temperature: 9 },
        })
      ).body.error,
    ).toMatchObject({ param: 'params.temperature', message: 'Temperature must be at most 2.' })
    expect(
      (await call('PUT', '/presets/writer', owner, { model: 'test/cheap', fallbacks: ['x/y'] }))
        .body.error,
    ).toMatchObject({
      param: 'fallbacks[0]',
      message: 'Fallback 1: x/y is not a catalog model ID, alias or service/auto choice.',
    })
    expect((await call('DELETE', '/presets/writer', owner)).body).toEqual({
      accountId,
      slug: 'writer',
      deleted: true,
    })
    expect((await served('@preset/writer')).status).toBe(404)
  })

  test("guardrails: create, change, list, delete; another account's guardrail is 404", async () => {
    const created = await call('POST', '/guardrails', owner, {
      name: 'no-mail',
      budgetNano: 1_000_000_000,
      filters: [{ detector: 'email', action: 'block' }],
    })
    expect(created).toMatchObject({
      status: 201,
      body: { accountId, name: 'no-mail', budgetNano: 1_000_000_000, budgetUsd: '1', keyIds: [] },
    })
    const id = created.body.id as string
    const changed = await call('PATCH', `/guardrails/${id}`, owner, { models: ['test/cheap'] })
    expect(changed.body).toMatchObject({ id, models: ['test/cheap'] })
    const badFilter = await call('PATCH', `/guardrails/${id}`, owner, {
      filters: [{ detector: 'regex', action: 'block' }],
    })
    expect(badFilter).toMatchObject({ status: 400, body: { error: { param: 'filters' } } })
    expect(badFilter.body.error.message).toBe(
      'Filter 1: Pattern is required for a custom pattern: 1 to 1000 characters.',
    )
    // Refusals name fields by the labels the guardrail form shows; `param` stays the request's field.
    expect((await call('PATCH', `/guardrails/${id}`, owner, {})).body.error.message).toBe(
      'Nothing to change: give Name, Allowed models, Monthly budget (USD) or Content filters.',
    )
    expect(
      (await call('PATCH', `/guardrails/${id}`, owner, { models: ['test/nope'] })).body.error,
    ).toMatchObject({
      param: 'models',
      message: 'Allowed models: unknown model IDs: test/nope. GET /api/v1/models lists them.',
    })
    expect(
      (await call('PATCH', `/guardrails/${id}`, owner, { name: '' })).body.error,
    ).toMatchObject({
      code: 'invalid_request',
      param: 'name',
      message: 'Name must not be empty.',
    })
    expect(
      (
        await call('PATCH', `/guardrails/${id}`, owner, {
          filters: [{ detector: 'regex', action: 'block', pattern: 'a(?=b)' }],
        })
      ).body.error,
    ).toMatchObject({ param: 'filters', message: expect.stringMatching(/^Filter 1: Pattern /) })
    expect(
      (await call('GET', '/guardrails', owner)).body.guardrails.map((g: Json) => g.id),
    ).toContain(id)

    const stranger = (await sessionFor(gw, await gw.account('1'), 'owner')).cookie
    expect((await call('GET', '/guardrails', stranger)).body.guardrails).toEqual([])
    for (const [method, body] of [
      ['PATCH', { name: 'mine' }],
      ['DELETE', undefined],
    ] as const) {
      const refused = await call(method, `/guardrails/${id}`, stranger, body)
      expect({ method, status: refused.status, code: refused.body.error?.code }).toEqual({
        method,
        status: 404,
        code: 'not_found',
      })
    }
    expect((await call('DELETE', `/guardrails/${id}`, owner)).body).toEqual({
      id,
      deleted: true,
      unassignedKeyIds: [],
    })
  })

  test("the guardrail list says what each budget counts this month: its keys' charges", async () => {
    const account = await gw.account('10')
    const cookie = (await sessionFor(gw, account, 'owner')).cookie
    const guardrail = await call('POST', '/guardrails', cookie, {
      name: 'budgeted',
      budgetNano: 1_000_000_000,
    })
    const other = await call('POST', '/guardrails', cookie, { name: 'unused' })
    const assigned = await gw.key(account, { guardrailId: guardrail.body.id })
    for (let i = 0; i < 2; i++)
      expect((await gw.chat(assigned.key, { model: 'test/cheap', messages: hello })).status).toBe(
        200,
      )
    await holdsEnded(gw, account)
    const listed = (await call('GET', '/guardrails', cookie)).body.guardrails as Json[]
    const used = Object.fromEntries(listed.map((row) => [row.id, row.budgetUsed]))
    expect(used[guardrail.body.id]).toEqual({ monthNano: 38_000, monthUsd: '0.000038' })
    expect(used[other.body.id]).toEqual({ monthNano: 0, monthUsd: '0' })
  })

  test("presets are per account: another account cannot read or delete this one's", async () => {
    await call('PUT', '/presets/shared-name', owner, { model: 'test/cheap' })
    const stranger = (await sessionFor(gw, await gw.account('1'), 'owner')).cookie
    expect((await call('GET', '/presets', stranger)).body.presets).toEqual([])
    expect((await call('DELETE', '/presets/shared-name', stranger)).status).toBe(404)
    expect(
      (await call('GET', '/presets', owner)).body.presets.map((preset: Json) => preset.slug),
    ).toContain('shared-name')
  })

  test('routing: read, restricted, applied to the next request, cleared', async () => {
    expect((await call('GET', '/routing', owner)).body).toEqual({
      accountId,
      models: null,
      providers: null,
    })
    expect((await call('PUT', '/routing', owner, { models: ['test/cheap'] })).body).toEqual({
      accountId,
      models: ['test/cheap'],
      providers: null,
    })
    expect((await served('test/other')).status).toBe(403)
    expect(
      (await call('PUT', '/routing', owner, { providers: ['nope'] })).body.error,
    ).toMatchObject({
      param: 'providers',
      message: expect.stringMatching(/^Allowed providers: unknown provider IDs: nope\. /),
    })
    expect((await call('PUT', '/routing', owner, { models: [] })).body.error).toMatchObject({
      param: 'models',
      message: 'Allowed models: list at least one model, or none (null) for no restriction.',
    })
    expect((await call('PUT', '/routing', owner, {})).body.error.message).toBe(
      'Nothing to change: give Allowed models or Allowed providers.',
    )
    expect((await call('PUT', '/routing', owner, { models: null })).body.models).toBeNull()
    expect((await served('test/other')).status).toBe(200)
  })

  test('routing: the providers a restriction may name, each with the models it serves', async () => {
    const { providers } = (await call('GET', '/routing/providers', owner)).body
    expect(providers.map((provider: Json) => provider.id)).toEqual([
      'fake',
      'fake-anthropic',
      'fake-b',
      'unkeyed',
      'keyless',
      'demo',
    ])
    expect(providers[0]).toEqual({ id: 'fake', models: ['test/cheap', 'test/other'] })
    expect(providers[2]).toEqual({ id: 'fake-b', models: [] })
    expect(
      (await call('PUT', '/routing', owner, { providers: [providers[0].id] })).body.providers,
    ).toEqual(['fake'])
    expect((await call('PUT', '/routing', owner, { providers: null })).body.providers).toBeNull()
  })

  test('members read the policy; only owner and admins change it', async () => {
    const member = (await sessionFor(gw, accountId, 'member')).cookie
    for (const path of ['/presets', '/guardrails', '/routing', '/routing/providers'])
      expect((await call('GET', path, member)).status).toBe(200)
    for (const [method, path, body] of [
      ['PUT', '/presets/p', { model: 'test/cheap' }],
      ['DELETE', '/presets/p', undefined],
      ['POST', '/guardrails', { name: 'g' }],
      ['PUT', '/routing', { models: null }],
    ] as const) {
      const refused = await call(method, path, member, body)
      expect({ path, status: refused.status, code: refused.body.error?.code }).toEqual({
        path,
        status: 403,
        code: 'forbidden',
      })
    }
    const teamAdmin = (await sessionFor(gw, accountId, 'admin')).cookie
    expect((await call('POST', '/guardrails', teamAdmin, { name: 'by-admin' })).status).toBe(201)
  })

  test('account limits: read by every member, changed by owner and admins, applied to the next request', async () => {
    const member = (await sessionFor(gw, accountId, 'member')).cookie
    const read = await call('GET', '/account/limits', member)
    expect(read).toMatchObject({
      status: 200,
      body: { accountId, rpmLimit: null, effective: { rpmLimit: gw.app.config.ACCOUNT_RPM_LIMIT } },
    })
    expect((await call('PATCH', '/account/limits', member, { concurrency: 1 })).status).toBe(403)
    expect(await call('PATCH', '/account/limits', owner, { concurrency: -1 })).toMatchObject({
      status: 400,
      body: {
        error: {
          param: 'concurrency',
          message: 'Requests at once must be at least 0.',
        },
      },
    })
    expect(await call('PATCH', '/account/limits', owner, {})).toMatchObject({
      status: 400,
      body: {
        error: {
          code: 'invalid_request',
          message:
            'Nothing to change: give Requests per minute, Tokens per minute or Requests at once.',
        },
      },
    })
    expect(await call('PATCH', '/account/limits', owner, { tpmLimit: 1 })).toMatchObject({
      status: 200,
      body: { tpmLimit: 1, effective: { tpmLimit: 1 } },
    })
    const refused = await gw.chat(key, { model: 'test/cheap', messages: hello })
    expect(refused.status).toBe(429)
    expect(((await refused.json()) as Json).error.message).toContain(
      'more than the 1 tokens per minute this account allows',
    )
    expect(await call('PATCH', '/account/limits', owner, { tpmLimit: null })).toMatchObject({
      status: 200,
      body: { tpmLimit: null },
    })
    expect((await served('test/cheap')).status).toBe(200)
  })

  // Last: the gateway listens from here on (PORT=0, so the API server picks its port).
  test("the preset list's API address names the port the API server bound, not PORT=0", async () => {
    expect(gw.app.config.PORT).toBe(0)
    expect(gw.app.config.PUBLIC_API_URL).toBe('')
    const { apiUrl, siteUrl } = gw.app.listen()
    const port = gw.app.api.server!.port!
    expect(port).toBeGreaterThan(0)
    const response = await fetch(`${siteUrl}/admin/v1/presets`, { headers: { cookie: owner } })
    const { baseUrl } = (await response.json()) as Json
    expect(baseUrl).toBe(`${new URL(siteUrl).protocol}//${new URL(siteUrl).hostname}:${port}`)
    expect(baseUrl).toBe(apiUrl)
    // It is the API server's: a chat request without a key is refused there as one (the site has none).
    const chat = await fetch(`${baseUrl}/v1/chat/completions`, { method: 'POST', body: '{}' })
    expect(chat.headers.get('x-service-error-code')).toBe('invalid_api_key')
  })
})
