// Provider pauses through the operator API: the provider list, pausing (requests get 503
// upstream_capacity_unavailable with Retry-After when no other route is left), resuming, and refusals.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import {
  anthropicTestModel,
  startTestGateway,
  testModel,
  type TestGateway,
} from '../../../helpers/gateway.ts'
import { describeWith } from '../../../helpers/services.ts'
import { chatOutcome, expectRefusal, operator } from './operator-client.ts'

const models = [
  testModel('test/cheap', 'fake'),
  // Served by both providers: a pause of one leaves the other.
  testModel('test/both', 'fake', {
    routes: [
      { provider: 'fake', model: 'fake' },
      { provider: 'fake-anthropic', model: 'fake' },
    ],
  }),
  anthropicTestModel('test/claude', 'fake'),
]

describeWith('postgres', 'provider pauses', () => {
  let gw: TestGateway
  let key: string
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres', models })
    key = (await gw.key(await gw.account('10'))).key
  })
  afterAll(() => gw?.close())

  test('the provider list says which providers have a key and which are paused', async () => {
    const listed = await operator(gw, 'GET', '/providers')
    expect(listed.status).toBe(200)
    const byId = Object.fromEntries(
      listed.body.providers.map((provider: { id: string }) => [provider.id, provider]),
    )
    expect(byId.fake).toMatchObject({
      style: 'openai',
      keyConfigured: true,
      apiKeyEnv: 'FAKE_PROVIDER_KEY',
      modelCount: 2,
      paused: null,
    })
    expect(byId['fake-anthropic']).toMatchObject({
      style: 'anthropic',
      keyConfigured: true,
      modelCount: 2,
    })
    expect(byId.unkeyed).toMatchObject({ keyConfigured: false, modelCount: 0 })
    // Providers that take no key can serve without one.
    expect(byId.keyless).toMatchObject({ keyConfigured: true, apiKeyEnv: null })
    expect(byId.demo).toMatchObject({ keyConfigured: true, apiKeyEnv: null })
  })

  test('a paused provider is skipped at once; its only models get 503 with Retry-After until it is resumed', async () => {
    expect(await chatOutcome(gw, key, 'test/cheap')).toMatchObject({ status: 200 })
    const before = Date.now()
    const paused = await operator(gw, 'POST', '/providers/fake/pause', {
      minutes: 10,
      reason: 'upstream incident',
    })
    expect(paused.status).toBe(200)
    expect(paused.body.providerId).toBe('fake')
    expect(paused.body.paused.reason).toBe('upstream incident')
    const untilMs = Date.parse(paused.body.paused.until)
    expect(untilMs - before).toBeGreaterThan(9 * 60_000)
    expect(untilMs - before).toBeLessThanOrEqual(10 * 60_000 + 1000)

    const refused = await chatOutcome(gw, key, 'test/cheap')
    expect(refused).toMatchObject({ status: 503, code: 'upstream_capacity_unavailable' })
    expect(Number(refused.retryAfter)).toBeGreaterThan(9 * 60)
    expect(Number(refused.retryAfter)).toBeLessThanOrEqual(10 * 60 + 1)
    // A model with another provider moves to it.
    const upstreamCalls = gw.upstream.requests.length
    expect(await chatOutcome(gw, key, 'test/both')).toMatchObject({
      status: 200,
      model: 'test/both',
    })
    expect(gw.upstream.requests.slice(upstreamCalls).map((request) => request.path)).toEqual([
      '/v1/messages',
    ])

    const listed = await operator(gw, 'GET', '/providers')
    expect(
      listed.body.providers.find((provider: { id: string }) => provider.id === 'fake').paused,
    ).toEqual(paused.body.paused)

    expect((await operator(gw, 'POST', '/providers/fake/resume')).body).toEqual({
      providerId: 'fake',
      paused: null,
    })
    expect(await chatOutcome(gw, key, 'test/cheap')).toMatchObject({
      status: 200,
      model: 'test/cheap',
    })
    // Resuming again changes nothing.
    expect((await operator(gw, 'POST', '/providers/fake/resume')).status).toBe(200)
  })

  test('a pause until a time, replaced by a later pause', async () => {
    const until = new Date(Date.now() + 3_600_000).toISOString()
    expect(
      (await operator(gw, 'POST', '/providers/fake-anthropic/pause', { until })).body.paused,
    ).toEqual({ until, reason: '' })
    expect(await chatOutcome(gw, key, 'test/claude')).toMatchObject({
      status: 503,
      code: 'upstream_capacity_unavailable',
    })
    const shorter = await operator(gw, 'POST', '/providers/fake-anthropic/pause', { minutes: 1 })
    expect(Date.parse(shorter.body.paused.until)).toBeLessThan(Date.parse(until))
    expect(Number((await chatOutcome(gw, key, 'test/claude')).retryAfter)).toBeLessThanOrEqual(61)
    await operator(gw, 'POST', '/providers/fake-anthropic/resume')
    expect(await chatOutcome(gw, key, 'test/claude')).toMatchObject({ status: 200 })
  })

  test('unknown providers and bad times are refused', async () => {
    expectRefusal(
      await operator(gw, 'POST', '/providers/acme/pause', { minutes: 5 }),
      404,
      'not_found',
    )
    expectRefusal(await operator(gw, 'POST', '/providers/acme/resume'), 404, 'not_found')
    expect(
      expectRefusal(
        await operator(gw, 'POST', '/providers/fake/pause', {}),
        400,
        'invalid_request',
      ),
    ).toBe('Give minutes or until (an ISO 8601 time) for the pause to end.')
    expect(
      expectRefusal(
        await operator(gw, 'POST', '/providers/fake/pause', {
          minutes: 5,
          until: '2099-01-01T00:00:00Z',
        }),
        400,
        'invalid_request',
      ),
    ).toBe('Give either minutes or until (an ISO 8601 time), not both.')
    expectRefusal(
      await operator(gw, 'POST', '/providers/fake/pause', { minutes: 0 }),
      400,
      'invalid_request',
      'minutes',
    )
    expectRefusal(
      await operator(gw, 'POST', '/providers/fake/pause', { minutes: 10_000_000 }),
      400,
      'invalid_request',
      'minutes',
    )
    expectRefusal(
      await operator(gw, 'POST', '/providers/fake/pause', { until: '2001-01-01T00:00:00Z' }),
      400,
      'invalid_request',
      'until',
    )
    expectRefusal(
      await operator(gw, 'POST', '/providers/fake/pause', { until: 'tomorrow' }),
      400,
      'invalid_request',
      'until',
    )
    expectRefusal(
      await operator(gw, 'POST', '/providers/fake/pause', { until: '2099-01-01T00:00:00' }),
      400,
      'invalid_request',
      'until',
    )
    expectRefusal(
      await operator(gw, 'POST', '/providers/fake/pause', { minutes: 5, why: 'x' }),
      400,
      'invalid_request',
      'why',
    )
    expect(
      (await operator(gw, 'GET', '/providers')).body.providers.every(
        (provider: { paused: unknown }) => provider.paused === null,
      ),
    ).toBe(true)
  })
})
