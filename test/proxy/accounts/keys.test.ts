// PATCH /operator/v1/keys/:id: a key's models and limits change for its next request.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestGateway, testModel, type TestGateway } from '../../helpers/gateway.ts'
import { describeWith } from '../../helpers/services.ts'
import { chatOutcome, expectRefusal, operator } from './settings/operator-client.ts'

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
    const updated = await operator(gw, 'PATCH', `/keys/${id}`, {
      allowedModels: ['test/cheap', 'test/cheap'],
      rpmLimit: 5,
      tpmLimit: 1000,
      concurrency: 2,
      dailyLimitNano: 1_500_000_000,
      monthlyLimitNano: 20_000_000_000,
    })
    expect(updated.status).toBe(200)
    expect(updated.body).toMatchObject({
      id,
      accountId,
      allowedModels: ['test/cheap'],
      rpmLimit: 5,
      tpmLimit: 1000,
      concurrency: 2,
      dailyLimitNano: 1_500_000_000,
      dailyLimitUsd: '1.5',
      monthlyLimitNano: 20_000_000_000,
      monthlyLimitUsd: '20',
      guardrailId: null,
    })
    const cleared = await operator(gw, 'PATCH', `/keys/${id}`, {
      allowedModels: null,
      rpmLimit: null,
      dailyLimitNano: null,
    })
    expect(cleared.body).toMatchObject({
      allowedModels: null,
      rpmLimit: null,
      tpmLimit: 1000,
      dailyLimitNano: null,
      dailyLimitUsd: null,
      monthlyLimitNano: 20_000_000_000,
    })
  })

  test('a change applies to the next request, without waiting for the key cache', async () => {
    const { id, key } = await gw.key(accountId)
    expect(await chatOutcome(gw, key, 'test/other')).toMatchObject({ status: 200 })
    await operator(gw, 'PATCH', `/keys/${id}`, { allowedModels: ['test/cheap'] })
    expect(await chatOutcome(gw, key, 'test/other')).toMatchObject({
      status: 403,
      code: 'model_not_allowed',
    })
    // One request of this minute counts already (the refused one does not).
    await operator(gw, 'PATCH', `/keys/${id}`, { allowedModels: null, rpmLimit: 2 })
    expect(await chatOutcome(gw, key, 'test/other')).toMatchObject({ status: 200 })
    expect(await chatOutcome(gw, key, 'test/other')).toMatchObject({
      status: 429,
      code: 'usage_limit_exceeded',
    })
  })

  test('bad changes are refused naming the field', async () => {
    const { id } = await gw.key(accountId)
    expectRefusal(
      await operator(gw, 'PATCH', `/keys/${id}`, { allowedModels: ['test/nope'] }),
      400,
      'invalid_request',
      'allowedModels',
    )
    expectRefusal(
      await operator(gw, 'PATCH', `/keys/${id}`, { allowedModels: [] }),
      400,
      'invalid_request',
      'allowedModels',
    )
    expectRefusal(
      await operator(gw, 'PATCH', `/keys/${id}`, { rpmLimit: -1 }),
      400,
      'invalid_request',
      'rpmLimit',
    )
    expectRefusal(
      await operator(gw, 'PATCH', `/keys/${id}`, { rpmLimit: 1.5 }),
      400,
      'invalid_request',
      'rpmLimit',
    )
    expectRefusal(
      await operator(gw, 'PATCH', `/keys/${id}`, { dailyLimitNano: 'lots' }),
      400,
      'invalid_request',
      'dailyLimitNano',
    )
    // A field of another vocabulary is refused by name.
    expectRefusal(
      await operator(gw, 'PATCH', `/keys/${id}`, { rpm: 5 }),
      400,
      'invalid_request',
      'rpm',
    )
    expectRefusal(await operator(gw, 'PATCH', `/keys/${id}`, {}), 400, 'invalid_request')
    expectRefusal(
      await operator(gw, 'PATCH', '/keys/key_missing', { rpmLimit: 1 }),
      404,
      'not_found',
    )
    // A rename is a change like any other.
    expect((await operator(gw, 'PATCH', `/keys/${id}`, { name: 'renamed' })).body).toMatchObject({
      id,
      name: 'renamed',
    })
  })
})
