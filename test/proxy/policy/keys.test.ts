// PATCH /operator/v1/keys/:id: a key's models and limits change for its next request.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestGateway, testModel, type TestGateway } from '../../helpers/gateway.ts'
import { describeWith } from '../../helpers/services.ts'
import { chatOutcome, expectRefusal, operator } from './operator-client.ts'

const models = [testModel('test/cheap', 'fake'), testModel('test/other', 'fake')]

describeWith('postgres', 'key updates', () => {
  let gw: TestGateway
  let accountId: string
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres', models })
    accountId = await gw.account('10')
  })
  afterAll(() => gw?.close())

  test('models and limits are changed, and null removes them', async () => {
    const { id } = await gw.key(accountId)
    const updated = await operator(gw, 'PATCH', `/keys/${id}`, { models: ['test/cheap', 'test/cheap'], rpm: 5, tpm: 1000, concurrency: 2, dailyUsd: '1.5', monthlyUsd: 20 })
    expect(updated.status).toBe(200)
    expect(updated.body).toMatchObject({
      id,
      accountId,
      models: ['test/cheap'],
      rpm: 5,
      tpm: 1000,
      concurrency: 2,
      dailyLimitNano: 1_500_000_000,
      dailyLimitUsd: '1.5',
      monthlyLimitNano: 20_000_000_000,
      monthlyLimitUsd: '20',
      guardrailId: null,
    })
    const cleared = await operator(gw, 'PATCH', `/keys/${id}`, { models: null, rpm: null, dailyUsd: null })
    expect(cleared.body).toMatchObject({ models: null, rpm: null, tpm: 1000, dailyLimitNano: null, dailyLimitUsd: null, monthlyLimitNano: 20_000_000_000 })
  })

  test('a change applies to the next request, without waiting for the key cache', async () => {
    const { id, key } = await gw.key(accountId)
    expect(await chatOutcome(gw, key, 'test/other')).toMatchObject({ status: 200 })
    await operator(gw, 'PATCH', `/keys/${id}`, { models: ['test/cheap'] })
    expect(await chatOutcome(gw, key, 'test/other')).toMatchObject({ status: 403, code: 'model_not_allowed' })
    // One request of this minute counts already (the refused one does not).
    await operator(gw, 'PATCH', `/keys/${id}`, { models: null, rpm: 2 })
    expect(await chatOutcome(gw, key, 'test/other')).toMatchObject({ status: 200 })
    expect(await chatOutcome(gw, key, 'test/other')).toMatchObject({ status: 429, code: 'usage_limit_exceeded' })
  })

  test('bad changes are refused naming the field', async () => {
    const { id } = await gw.key(accountId)
    expectRefusal(await operator(gw, 'PATCH', `/keys/${id}`, { models: ['test/nope'] }), 400, 'invalid_request', 'models')
    expectRefusal(await operator(gw, 'PATCH', `/keys/${id}`, { models: [] }), 400, 'invalid_request', 'models')
    expectRefusal(await operator(gw, 'PATCH', `/keys/${id}`, { rpm: -1 }), 400, 'invalid_request', 'rpm')
    expectRefusal(await operator(gw, 'PATCH', `/keys/${id}`, { rpm: 1.5 }), 400, 'invalid_request', 'rpm')
    expectRefusal(await operator(gw, 'PATCH', `/keys/${id}`, { dailyUsd: 'lots' }), 400, 'invalid_request', 'dailyUsd')
    expectRefusal(await operator(gw, 'PATCH', `/keys/${id}`, { name: 'renamed' }), 400, 'invalid_request', 'name')
    expectRefusal(await operator(gw, 'PATCH', `/keys/${id}`, {}), 400, 'invalid_request')
    expectRefusal(await operator(gw, 'PATCH', '/keys/key_missing', { rpm: 1 }), 404, 'not_found')
  })
})
