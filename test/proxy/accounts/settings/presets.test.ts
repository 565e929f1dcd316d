// Presets through the operator API: saving, listing and deleting, the refusals (a model the account's
// routing forbids too), and that a change is what the next `@preset/…` request uses, in this process and
// in another one.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestGateway, testModel, type TestGateway } from '../../../helpers/gateway.ts'
import { describeWith } from '../../../helpers/services.ts'
import { chatOutcome, expectRefusal, hello, operator } from './operator-client.ts'

const models = [
  testModel('test/cheap', 'fake'),
  testModel('test/other', 'fake'),
  testModel('test/third', 'fake'),
]
const catalog = {
  aliases: [{ id: 'test/latest', target: 'test/other' }],
  auto: [{ id: 'service/auto', candidates: ['test/other', 'test/third'] }],
}

describeWith(['postgres', 'redis'], 'presets', () => {
  let gw: TestGateway
  let sibling: TestGateway
  let accountId: string
  let key: string
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'redis', database: 'postgres', models, catalog })
    sibling = await startTestGateway({
      store: 'redis',
      database: 'postgres',
      models,
      catalog,
      sibling: gw,
    })
    accountId = await gw.account('10')
    key = (await gw.key(accountId)).key
  })
  afterAll(async () => {
    await sibling?.close()
    await gw?.close()
  })

  test('a preset is created with 201, replaced with 200, listed and deleted', async () => {
    const created = await operator(gw, 'PUT', `/accounts/${accountId}/presets/writer`, {
      model: 'test/cheap',
      fallbacks: ['test/other'],
      params: { temperature: 0.2 },
    })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({
      accountId,
      slug: 'writer',
      id: '@preset/writer',
      model: 'test/cheap',
      fallbacks: ['test/other'],
      params: { temperature: 0.2 },
    })

    const replaced = await operator(gw, 'PUT', `/accounts/${accountId}/presets/writer`, {
      model: 'test/other',
    })
    expect(replaced.status).toBe(200)
    expect(replaced.body).toMatchObject({ model: 'test/other', fallbacks: [], params: {} })
    expect(Date.parse(replaced.body.updatedAt)).toBeGreaterThanOrEqual(
      Date.parse(created.body.updatedAt),
    )

    const listed = await operator(gw, 'GET', `/accounts/${accountId}/presets`)
    expect(listed.body.presets.map((preset: { slug: string }) => preset.slug)).toContain('writer')

    const deleted = await operator(gw, 'DELETE', `/accounts/${accountId}/presets/writer`)
    expect(deleted.body).toEqual({ accountId, slug: 'writer', deleted: true })
    expectRefusal(
      await operator(gw, 'DELETE', `/accounts/${accountId}/presets/writer`),
      404,
      'not_found',
    )
  })

  test('a preset naming what a request could not name is refused by field', async () => {
    const put = (slug: string, body: unknown) =>
      operator(gw, 'PUT', `/accounts/${accountId}/presets/${slug}`, body)
    expect(
      expectRefusal(await put('ok', { model: 'test/missing' }), 400, 'invalid_request', 'model'),
    ).toContain('test/missing')
    expectRefusal(await put('ok', { model: 'cheap' }), 400, 'invalid_request', 'model')
    expect(
      expectRefusal(await put('ok', { model: '@preset/other' }), 400, 'invalid_request', 'model'),
    ).toContain('another preset')
    expectRefusal(
      await put('ok', { model: 'test/cheap', fallbacks: ['test/other', 'test/nope'] }),
      400,
      'invalid_request',
      'fallbacks[1]',
    )
    expectRefusal(
      await put('ok', {
        model: 'test/cheap',
        fallbacks: ['test/other', 'test/third', 'test/other', 'test/cheap'],
      }),
      400,
      'invalid_request',
      'fallbacks',
    )
    expectRefusal(await put('Bad_Slug', { model: 'test/cheap' }), 400, 'invalid_request', 'slug')
    expectRefusal(await put('-x', { model: 'test/cheap' }), 400, 'invalid_request', 'slug')
    expect(
      expectRefusal(
        await put('ok', { model: 'test/cheap', params: { temperature: 3 } }),
        400,
        'invalid_request',
        'params.temperature',
      ),
    ).toBe('Temperature must be at most 2.')
    // The operator API names a parameter by the preset form's label, as the dashboard's API does.
    expect(
      expectRefusal(
        await put('ok', { model: 'test/cheap', params: { top_p: 1.5 } }),
        400,
        'invalid_request',
        'params.top_p',
      ),
    ).toBe('Top P must be at most 1.')
    expect(
      expectRefusal(
        await put('ok', { model: 'test/cheap', params: { max_tokens: 0 } }),
        400,
        'invalid_request',
        'params.max_tokens',
      ),
    ).toBe('Max tokens must be at least 1.')
    expect(
      expectRefusal(
        await put('ok', { model: 'test/cheap', params: { stop: ['a', 'b', 'c', 'd', 'e'] } }),
        400,
        'invalid_request',
        'params.stop',
      ),
    ).toBe('Stop sequences must have at most 4 items.')
    expectRefusal(
      await put('ok', { model: 'test/cheap', params: { seed: 1 } }),
      400,
      'invalid_request',
    )
    expectRefusal(
      await put('ok', { model: 'test/cheap', provider: 'fake' }),
      400,
      'invalid_request',
      'provider',
    )
    expectRefusal(
      await operator(gw, 'PUT', '/accounts/acct_missing/presets/ok', { model: 'test/cheap' }),
      404,
      'not_found',
    )
    expect(
      (await operator(gw, 'GET', `/accounts/${accountId}/presets`)).body.presets.some(
        (preset: { slug: string }) => preset.slug === 'ok',
      ),
    ).toBe(false)
  })

  test("a preset naming a model the account's routing forbids is refused, naming the model", async () => {
    const routed = await gw.account('1')
    await operator(gw, 'PUT', `/accounts/${routed}/routing`, { models: ['test/cheap'] })
    const put = (body: unknown) => operator(gw, 'PUT', `/accounts/${routed}/presets/routed`, body)
    const rest =
      "allowed by the account's routing restrictions, so every call of the preset would be refused. Allow it on the Routing page, or choose another model."
    expect(expectRefusal(await put({ model: 'test/other' }), 400, 'invalid_request', 'model')).toBe(
      `Model: test/other is not ${rest}`,
    )
    expect(
      expectRefusal(
        await put({ model: 'test/cheap', fallbacks: ['test/cheap', 'test/third'] }),
        400,
        'invalid_request',
        'fallbacks[1]',
      ),
    ).toBe(`Fallback 2: test/third is not ${rest}`)
    expect(
      expectRefusal(
        await put({ model: 'test/cheap', fallbacks: ['test/latest'] }),
        400,
        'invalid_request',
        'fallbacks[0]',
      ),
    ).toBe(`Fallback 1: test/latest (an alias of test/other) is not ${rest}`)
    expect(
      expectRefusal(await put({ model: 'service/auto' }), 400, 'invalid_request', 'model'),
    ).toBe(`Model: none of the models service/auto chooses from is ${rest}`)
    expect((await operator(gw, 'GET', `/accounts/${routed}/presets`)).body.presets).toEqual([])

    // What the routing allows is saved, and answers.
    expect((await put({ model: 'test/cheap' })).status).toBe(201)
    await operator(gw, 'PUT', `/accounts/${routed}/routing`, {
      models: ['test/cheap', 'test/third'],
    })
    expect((await put({ model: 'service/auto', fallbacks: ['test/cheap'] })).status).toBe(200)
  })

  test('a request to @preset/x is served by the preset model at once after each change, with its parameters', async () => {
    await operator(gw, 'PUT', `/accounts/${accountId}/presets/live`, {
      model: 'test/cheap',
      params: { temperature: 0.3, max_tokens: 50 },
    })
    expect(await chatOutcome(gw, key, '@preset/live')).toMatchObject({
      status: 200,
      model: 'test/cheap',
    })
    const sent = gw.upstream.requests.at(-1)!.body
    expect(sent.temperature).toBe(0.3)

    await operator(gw, 'PUT', `/accounts/${accountId}/presets/live`, { model: 'test/other' })
    expect(await chatOutcome(gw, key, '@preset/live')).toMatchObject({
      status: 200,
      model: 'test/other',
    })
    expect(gw.upstream.requests.at(-1)!.body.temperature).toBeUndefined()

    // A request's own value wins over the preset's.
    await operator(gw, 'PUT', `/accounts/${accountId}/presets/live`, {
      model: 'test/third',
      params: { temperature: 0.3 },
    })
    const own = await gw.chat(key, { model: '@preset/live', messages: hello, temperature: 0.9 })
    expect(own.headers.get('x-service-model')).toBe('test/third')
    expect(gw.upstream.requests.at(-1)!.body.temperature).toBe(0.9)

    await operator(gw, 'DELETE', `/accounts/${accountId}/presets/live`)
    expect(await chatOutcome(gw, key, '@preset/live')).toMatchObject({
      status: 404,
      code: 'unknown_model',
    })
  })

  test('another process sees a change without waiting for its cache to expire', async () => {
    await operator(gw, 'PUT', `/accounts/${accountId}/presets/shared`, { model: 'test/cheap' })
    expect(await chatOutcome(sibling, key, '@preset/shared')).toMatchObject({
      status: 200,
      model: 'test/cheap',
    })
    await operator(gw, 'PUT', `/accounts/${accountId}/presets/shared`, { model: 'test/other' })
    // The invalidation travels over Redis pub/sub: a few milliseconds, far below the cache TTL.
    let served: string | null = null
    for (let attempt = 0; attempt < 50 && served !== 'test/other'; attempt++) {
      served = (await chatOutcome(sibling, key, '@preset/shared')).model
      if (served !== 'test/other') await Bun.sleep(20)
    }
    expect(served).toBe('test/other')
  })
})
