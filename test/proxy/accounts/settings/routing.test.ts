// An account's routing restrictions through the operator API: set, partly changed, cleared, refused, and
// applied to the account's keys at once.
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
  testModel('test/other', 'fake'),
  anthropicTestModel('test/claude', 'fake'),
]

describeWith('postgres', 'account routing restrictions', () => {
  let gw: TestGateway
  let accountId: string
  let key: string
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres', models })
    accountId = await gw.account('10')
    key = (await gw.key(accountId)).key
  })
  afterAll(() => gw?.close())

  test('restrictions apply to every key of the account at once, and clearing them lifts them', async () => {
    expect(await chatOutcome(gw, key, 'test/other')).toMatchObject({ status: 200 })

    const set = await operator(gw, 'PUT', `/accounts/${accountId}/routing`, {
      models: ['test/cheap', 'test/claude'],
      providers: null,
    })
    expect(set.body).toEqual({ accountId, models: ['test/cheap', 'test/claude'], providers: null })
    expect(await chatOutcome(gw, key, 'test/other')).toMatchObject({
      status: 403,
      code: 'model_not_allowed',
    })
    expect(await chatOutcome(gw, key, 'test/cheap')).toMatchObject({ status: 200 })

    // Only the field given changes.
    const providers = await operator(gw, 'PUT', `/accounts/${accountId}/routing`, {
      providers: ['fake-anthropic'],
    })
    expect(providers.body).toEqual({
      accountId,
      models: ['test/cheap', 'test/claude'],
      providers: ['fake-anthropic'],
    })
    expect(await chatOutcome(gw, key, 'test/cheap')).toMatchObject({
      status: 503,
      code: 'no_available_route',
    })
    expect(await chatOutcome(gw, key, 'test/claude')).toMatchObject({
      status: 200,
      model: 'test/claude',
    })

    const cleared = await operator(gw, 'DELETE', `/accounts/${accountId}/routing`)
    expect(cleared.body).toEqual({ accountId, models: null, providers: null })
    expect(await chatOutcome(gw, key, 'test/other')).toMatchObject({ status: 200 })
  })

  test('unknown models and providers, empty lists and unknown accounts are refused', async () => {
    const put = (body: unknown) => operator(gw, 'PUT', `/accounts/${accountId}/routing`, body)
    expect(
      expectRefusal(
        await put({ models: ['test/cheap', 'test/gone'] }),
        400,
        'invalid_request',
        'models',
      ),
    ).toContain('test/gone')
    expect(
      expectRefusal(await put({ providers: ['acme'] }), 400, 'invalid_request', 'providers'),
    ).toContain('acme')
    expectRefusal(await put({ providers: [] }), 400, 'invalid_request', 'providers')
    expectRefusal(await put({}), 400, 'invalid_request')
    expectRefusal(await put({ models: null, regions: ['eu'] }), 400, 'invalid_request', 'regions')
    expectRefusal(
      await operator(gw, 'PUT', '/accounts/acct_missing/routing', { models: null }),
      404,
      'not_found',
    )
    expect((await put({ models: null, providers: null })).body).toEqual({
      accountId,
      models: null,
      providers: null,
    })
  })
})
