// The policy commands of `bun run admin` (presets, routing, guardrails, key updates, provider pauses)
// against a listening test gateway, with their effect on the next API request.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createAccountless } from '../../../../proxy/accounts/people/accountless.ts'
import { startTestGateway, testModel, type TestGateway } from '../../../helpers/gateway.ts'
import { describeWith } from '../../../helpers/services.ts'
import { runAdminCli } from '../../../helpers/admin-cli.ts'

const hello = [{ role: 'user', content: 'hello' }]

describeWith('postgres', 'policy commands of bun run admin', () => {
  let gw: TestGateway
  let siteUrl: string
  let accountId: string
  let keyId: string
  let key: string

  const admin = (...args: string[]) =>
    runAdminCli({ SITE_URL: siteUrl, ADMIN_TOKEN: gw.app.operatorToken }, args)

  const errorCode = (result: { stderr: string }) => JSON.parse(result.stderr).error.code as string
  const served = async (model: string) => {
    const response = await gw.chat(key, { model, messages: hello })
    return { status: response.status, model: response.headers.get('x-service-model') }
  }

  beforeAll(async () => {
    gw = await startTestGateway({
      store: 'memory',
      database: 'postgres',
      models: [testModel('test/cheap', 'fake'), testModel('test/other', 'fake')],
    })
    siteUrl = gw.app.listen().siteUrl
    accountId = await gw.account('10')
    ;({ id: keyId, key } = await gw.key(accountId))
  })
  afterAll(() => gw?.close())

  test('preset set, list and delete', async () => {
    const set = await admin(
      'preset',
      'set',
      accountId,
      'writer',
      '--model',
      'test/other',
      '--fallbacks',
      'test/cheap',
      '--temperature',
      '0.5',
      '--top-p',
      '0.9',
      '--max-tokens',
      '100',
      '--stop',
      'END,STOP',
    )
    expect(set.code).toBe(0)
    expect(set.json).toMatchObject({
      slug: 'writer',
      model: 'test/other',
      fallbacks: ['test/cheap'],
      params: { temperature: 0.5, top_p: 0.9, max_tokens: 100, stop: ['END', 'STOP'] },
    })
    expect(await served('@preset/writer')).toEqual({ status: 200, model: 'test/other' })

    expect(
      (await admin('preset', 'set', accountId, 'writer', '--model', 'test/cheap')).json.model,
    ).toBe('test/cheap')
    expect(await served('@preset/writer')).toEqual({ status: 200, model: 'test/cheap' })
    expect((await admin('preset', 'list', accountId)).json.presets).toHaveLength(1)

    const unknown = await admin('preset', 'set', accountId, 'writer', '--model', 'test/nope')
    expect(unknown.code).toBe(1)
    expect(errorCode(unknown)).toBe('invalid_request')
    expect(
      (await admin('preset', 'set', accountId, 'writer', 'extra', '--model', 'test/cheap')).code,
    ).toBe(2)
    expect(
      (
        await admin(
          'preset',
          'set',
          accountId,
          'writer',
          '--model',
          'test/cheap',
          '--temperature',
          'hot',
        )
      ).code,
    ).toBe(2)

    expect((await admin('preset', 'delete', accountId, 'writer')).json).toEqual({
      accountId,
      slug: 'writer',
      deleted: true,
    })
    expect((await served('@preset/writer')).status).toBe(404)
  })

  test('routing set and clear', async () => {
    expect((await admin('routing', 'set', accountId, '--models', 'test/cheap')).json).toEqual({
      accountId,
      models: ['test/cheap'],
      providers: null,
    })
    expect((await served('test/other')).status).toBe(403)
    expect((await admin('routing', 'set', accountId, '--providers', 'fake')).json).toEqual({
      accountId,
      models: ['test/cheap'],
      providers: ['fake'],
    })
    expect((await admin('routing', 'set', accountId, '--models', 'none')).json.models).toBeNull()
    expect((await served('test/other')).status).toBe(200)
    expect(errorCode(await admin('routing', 'set', accountId, '--providers', 'acme'))).toBe(
      'invalid_request',
    )
    expect((await admin('routing', 'set', accountId)).code).toBe(2)
    expect((await admin('routing', 'clear', accountId)).json).toEqual({
      accountId,
      models: null,
      providers: null,
    })
  })

  test('account set: account-level limits shared by the keys, back to the default with none; refused values name the field', async () => {
    const defaults = {
      rpmLimit: gw.app.config.ACCOUNT_RPM_LIMIT,
      tpmLimit: gw.app.config.ACCOUNT_TPM_LIMIT,
      concurrency: gw.app.config.ACCOUNT_CONCURRENCY_LIMIT,
    }
    // An account of its own: the rpm window counts every request of the account this minute.
    const accountId = await gw.account('1')
    const key = (await gw.key(accountId)).key
    const served = async (model: string) => (await gw.chat(key, { model, messages: hello })).status
    expect((await admin('account', 'limits', accountId)).json).toEqual({
      accountId,
      rpmLimit: null,
      tpmLimit: null,
      concurrency: null,
      effective: defaults,
    })
    const set = await admin('account', 'set', accountId, '--rpm', '2', '--concurrency', '5')
    expect(set.json).toEqual({
      accountId,
      rpmLimit: 2,
      tpmLimit: null,
      concurrency: 5,
      effective: { ...defaults, rpmLimit: 2, concurrency: 5 },
    })
    // Two requests a minute for the whole account, whichever key sends them.
    const second = (await gw.key(accountId)).key
    expect(await served('test/cheap')).toBe(200)
    expect((await gw.chat(second, { model: 'test/cheap', messages: hello })).status).toBe(200)
    const refused = await gw.chat(key, { model: 'test/cheap', messages: hello })
    expect(refused.status).toBe(429)
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(
      'this account allows 2 requests per minute',
    )
    expect((await admin('account', 'set', accountId, '--rpm', 'none')).json).toMatchObject({
      rpmLimit: null,
      concurrency: 5,
      effective: { rpmLimit: defaults.rpmLimit },
    })
    expect(await served('test/cheap')).toBe(200)
    expect((await admin('account', 'set', accountId, '--rpm', '-1')).code).toBe(2)
    expect((await admin('account', 'set', accountId)).code).toBe(2)
    expect(errorCode(await admin('account', 'set', 'acct_nope', '--rpm', '1'))).toBe('not_found')
    const operator = (body: unknown) =>
      fetch(`${siteUrl}/operator/v1/accounts/${accountId}/limits`, {
        method: 'PATCH',
        headers: {
          authorization: `Bearer ${gw.app.operatorToken}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify(body),
      }).then(async (response) => ({
        status: response.status,
        body: (await response.json()) as Record<string, any>,
      }))
    expect(await operator({ tpmLimit: 'many' })).toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_request', param: 'tpmLimit' } },
    })
    expect(await operator({ rpm: 5 })).toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_request', param: 'rpm' } },
    })
    expect(await operator({ concurrency: null })).toMatchObject({
      status: 200,
      body: { concurrency: null },
    })
    const spec = (await (await fetch(`${siteUrl}/operator/v1/openapi/json`)).json()) as {
      paths: Record<string, Record<string, unknown>>
    }
    expect(Object.keys(spec.paths['/operator/v1/accounts/{id}/limits']!).sort()).toEqual([
      'get',
      'patch',
    ])
  })

  test('link replace and revoke', async () => {
    const { accountId: accountless } = await createAccountless(gw.app.operator)
    const replaced = await admin('link', 'replace', accountless)
    expect(replaced.json.dashboardLink).toMatch(/\/dashboard#link=[A-Za-z0-9_-]{43}$/)
    expect((await admin('link', 'revoke', accountless)).json).toEqual({
      accountId: accountless,
      revoked: true,
    })
    // An account made with `account create` has no identity either: a link hands it over.
    expect((await admin('link', 'replace', await gw.account('0'))).json.dashboardLink).toContain(
      '#link=',
    )
    expect(errorCode(await admin('link', 'revoke', 'acct_none'))).toBe('not_found')
  })

  test('guardrail create, update, list, assignment by key update, and delete', async () => {
    const filters = JSON.stringify([
      { detector: 'keywords', action: 'block', keywords: ['forbidden'] },
    ])
    const created = await admin(
      'guardrail',
      'create',
      accountId,
      '--name',
      'Cheap only',
      '--models',
      'test/cheap',
      '--budget-usd',
      '5',
      '--filters',
      filters,
    )
    expect(created.code).toBe(0)
    expect(created.json).toMatchObject({
      name: 'Cheap only',
      models: ['test/cheap'],
      budgetNano: 5_000_000_000,
    })
    const guardrailId = created.json.id as string

    const assigned = await admin(
      'key',
      'update',
      keyId,
      '--guardrail',
      guardrailId,
      '--rpm',
      '100',
      '--daily-usd',
      'none',
    )
    expect(assigned.json).toMatchObject({
      id: keyId,
      guardrailId,
      rpmLimit: 100,
      dailyLimitNano: null,
    })
    expect((await served('test/other')).status).toBe(403)

    const updated = await admin(
      'guardrail',
      'update',
      guardrailId,
      '--models',
      'none',
      '--budget-usd',
      'none',
      '--name',
      'Open',
    )
    expect(updated.json).toMatchObject({
      id: guardrailId,
      name: 'Open',
      models: null,
      budgetNano: null,
      keyIds: [keyId],
    })
    expect((await served('test/other')).status).toBe(200)
    expect(
      (await admin('guardrail', 'list', accountId)).json.guardrails.map(
        (g: { id: string }) => g.id,
      ),
    ).toEqual([guardrailId])

    const badFilter = await admin(
      'guardrail',
      'update',
      guardrailId,
      '--filters',
      '[{"detector":"email","action":"shout"}]',
    )
    expect(errorCode(badFilter)).toBe('invalid_request')
    // The server's words name the filter and field as the dashboard does; `param` names the request field.
    expect(JSON.parse(badFilter.stderr).error).toMatchObject({
      param: 'filters',
      message: 'Filter 1: Action must be block or redact.',
    })
    const unknownModel = await admin('guardrail', 'update', guardrailId, '--models', 'test/nope')
    expect(JSON.parse(unknownModel.stderr).error).toMatchObject({
      param: 'models',
      message: 'Allowed models: unknown model IDs: test/nope. GET /api/v1/models lists them.',
    })
    const hot = await admin(
      'preset',
      'set',
      accountId,
      'hot',
      '--model',
      'test/cheap',
      '--temperature',
      '5',
    )
    expect(JSON.parse(hot.stderr).error).toMatchObject({
      param: 'params.temperature',
      message: 'Temperature must be at most 2.',
    })
    expect((await admin('guardrail', 'update', guardrailId, '--filters', '[not json')).code).toBe(2)

    expect(
      (await admin('key', 'update', keyId, '--guardrail', 'none', '--rpm', 'none')).json,
    ).toMatchObject({ guardrailId: null, rpmLimit: null })
    expect((await admin('guardrail', 'delete', guardrailId)).json).toEqual({
      id: guardrailId,
      deleted: true,
      unassignedKeyIds: [],
    })
    expect(errorCode(await admin('guardrail', 'delete', guardrailId))).toBe('not_found')
  })

  test('provider list, pause and resume', async () => {
    const listed = await admin('provider', 'list')
    const keyed = Object.fromEntries(
      listed.json.providers.map((provider: { id: string; keyConfigured: boolean }) => [
        provider.id,
        provider.keyConfigured,
      ]),
    )
    expect(keyed).toMatchObject({ fake: true, 'fake-anthropic': true, unkeyed: false })
    const paused = await admin(
      'provider',
      'pause',
      'fake',
      '--minutes',
      '5',
      '--reason',
      'maintenance',
    )
    expect(paused.json).toMatchObject({ providerId: 'fake', paused: { reason: 'maintenance' } })
    const refused = await gw.chat(key, { model: 'test/cheap', messages: hello })
    expect(refused.status).toBe(503)
    expect(refused.headers.get('x-service-error-code')).toBe('upstream_capacity_unavailable')
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(240)

    expect((await admin('provider', 'resume', 'fake')).json).toEqual({
      providerId: 'fake',
      paused: null,
    })
    expect((await served('test/cheap')).status).toBe(200)
    expect(errorCode(await admin('provider', 'pause', 'acme', '--minutes', '5'))).toBe('not_found')
    // A pause of no length is refused before it is sent (exit 2); a past end is the server's to refuse.
    expect((await admin('provider', 'pause', 'fake')).code).toBe(2)
    expect(
      errorCode(await admin('provider', 'pause', 'fake', '--until', '2001-01-01T00:00:00Z')),
    ).toBe('invalid_request')
  })
})
