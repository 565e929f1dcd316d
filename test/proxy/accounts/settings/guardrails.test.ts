// Guardrails through the operator API: create, edit, list, delete, assignment to keys, the refusals, and
// that every change applies to the next request at once.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestGateway, testModel, type TestGateway } from '../../../helpers/gateway.ts'
import { describeWith } from '../../../helpers/services.ts'
import { chatOutcome, expectRefusal, operator } from './operator-client.ts'

const models = [testModel('test/cheap', 'fake'), testModel('test/other', 'fake')]
const block = (keywords: string[]) => [{ detector: 'keywords', action: 'block', keywords }]

describeWith('postgres', 'guardrails', () => {
  let gw: TestGateway
  let accountId: string
  let otherAccountId: string
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres', models })
    accountId = await gw.account('10')
    otherAccountId = await gw.account('10')
  })
  afterAll(() => gw?.close())

  test('a guardrail is created, edited, listed and deleted', async () => {
    const created = await operator(gw, 'POST', `/accounts/${accountId}/guardrails`, {
      name: 'Support bots',
      models: ['test/cheap'],
      budgetNano: 12_500_000_000,
      filters: block(['secret']),
    })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({
      accountId,
      name: 'Support bots',
      models: ['test/cheap'],
      budgetNano: 12_500_000_000,
      budgetUsd: '12.5',
      keyIds: [],
    })
    const id = created.body.id as string
    expect(id).toMatch(/^grd_/)

    const edited = await operator(gw, 'PATCH', `/guardrails/${id}`, {
      budgetNano: null,
      models: null,
    })
    expect(edited.body).toMatchObject({
      id,
      name: 'Support bots',
      models: null,
      budgetNano: null,
      budgetUsd: null,
      filters: block(['secret']),
    })
    expect(Date.parse(edited.body.updatedAt)).toBeGreaterThan(Date.parse(created.body.updatedAt))
    // Two edits in a row still move the version the compiled filters are cached by.
    const again = await operator(gw, 'PATCH', `/guardrails/${id}`, { name: 'Support' })
    expect(Date.parse(again.body.updatedAt)).toBeGreaterThan(Date.parse(edited.body.updatedAt))

    const listed = await operator(gw, 'GET', `/accounts/${accountId}/guardrails`)
    expect(listed.body.guardrails.map((guardrail: { id: string }) => guardrail.id)).toContain(id)
    expect(
      (await operator(gw, 'GET', `/accounts/${otherAccountId}/guardrails`)).body.guardrails,
    ).toEqual([])

    expect((await operator(gw, 'DELETE', `/guardrails/${id}`)).body).toEqual({
      id,
      deleted: true,
      unassignedKeyIds: [],
    })
    expectRefusal(await operator(gw, 'DELETE', `/guardrails/${id}`), 404, 'not_found')
    expectRefusal(await operator(gw, 'PATCH', `/guardrails/${id}`, { name: 'x' }), 404, 'not_found')
  })

  test('bad guardrails are refused naming the field, and the filter by its index', async () => {
    const create = (body: unknown) =>
      operator(gw, 'POST', `/accounts/${accountId}/guardrails`, body)
    const badFilter = expectRefusal(
      await create({
        name: 'f',
        filters: [...block(['ok']), { detector: 'tarot', action: 'block' }],
      }),
      400,
      'invalid_request',
      'filters',
    )
    // A filter's problem names the filter and its field as the dashboard's filter editor labels them.
    expect(badFilter).toStartWith('Filter 2: Detector must be one of email, phone')
    expect(
      expectRefusal(
        await create({
          name: 'f',
          filters: [{ detector: 'regex', action: 'redact', pattern: '(' }],
        }),
        400,
        'invalid_request',
        'filters',
      ),
    ).toStartWith('Filter 1: Pattern is not a valid pattern: ')
    expect(
      expectRefusal(
        await create({ name: 'f', models: ['test/nope'] }),
        400,
        'invalid_request',
        'models',
      ),
    ).toStartWith('Allowed models: unknown model IDs: test/nope.')
    expect(
      expectRefusal(await create({ name: 'f', models: [] }), 400, 'invalid_request', 'models'),
    ).toBe('Allowed models: list at least one model, or none (null) for no restriction.')
    expectRefusal(await create({ name: 'f', budgetNano: -1 }), 400, 'invalid_request', 'budgetNano')
    expectRefusal(await create({ name: 'f', budgetNano: 0 }), 400, 'invalid_request', 'budgetNano')
    expect(expectRefusal(await create({ name: '' }), 400, 'invalid_request', 'name')).toBe(
      'Name must not be empty.',
    )
    expect(expectRefusal(await create({ name: '  ' }), 400, 'invalid_request', 'name')).toBe(
      'Name must be 1 to 100 characters.',
    )
    expectRefusal(await create({ models: ['test/cheap'] }), 400, 'invalid_request', 'name')
    expectRefusal(await create({ name: 'f', action: 'block' }), 400, 'invalid_request', 'action')
    expectRefusal(
      await operator(gw, 'POST', '/accounts/acct_missing/guardrails', { name: 'f' }),
      404,
      'not_found',
    )

    expect((await create({ name: 'Twice' })).status).toBe(201)
    expect(expectRefusal(await create({ name: 'Twice' }), 400, 'invalid_request', 'name')).toBe(
      'Name: the account already has a guardrail named "Twice".',
    )
    expect(
      (await operator(gw, 'POST', `/accounts/${otherAccountId}/guardrails`, { name: 'Twice' }))
        .status,
    ).toBe(201)
    expect(
      expectRefusal(
        await operator(gw, 'PATCH', `/guardrails/${(await create({ name: 'Other' })).body.id}`, {}),
        400,
        'invalid_request',
      ),
    ).toBe('Nothing to change: give Name, Allowed models, Monthly budget (USD) or Content filters.')
  })

  test('assigning, editing and deleting a guardrail applies to the key’s next request', async () => {
    const { id: keyId, key } = await gw.key(accountId)
    const guardrail = await operator(gw, 'POST', `/accounts/${accountId}/guardrails`, {
      name: 'Only cheap',
      models: ['test/cheap'],
    })
    const guardrailId = guardrail.body.id as string
    // Warm the key cache first, so the change must come through the invalidation, not a cache miss.
    expect(await chatOutcome(gw, key, 'test/other')).toMatchObject({ status: 200 })

    const assigned = await operator(gw, 'PATCH', `/keys/${keyId}`, { guardrailId })
    expect(assigned.body).toMatchObject({ id: keyId, accountId, guardrailId })
    expect(await chatOutcome(gw, key, 'test/other')).toMatchObject({
      status: 403,
      code: 'model_not_allowed',
    })
    expect(await chatOutcome(gw, key, 'test/cheap')).toMatchObject({
      status: 200,
      model: 'test/cheap',
    })
    expect(
      (await operator(gw, 'GET', `/accounts/${accountId}/guardrails`)).body.guardrails.find(
        (g: { id: string }) => g.id === guardrailId,
      ).keyIds,
    ).toEqual([keyId])

    await operator(gw, 'PATCH', `/guardrails/${guardrailId}`, {
      models: ['test/other'],
      filters: block(['forbidden']),
    })
    expect(await chatOutcome(gw, key, 'test/other')).toMatchObject({
      status: 200,
      model: 'test/other',
    })
    expect(await chatOutcome(gw, key, 'test/cheap')).toMatchObject({
      status: 403,
      code: 'model_not_allowed',
    })
    expect(
      await chatOutcome(gw, key, 'test/other', [{ role: 'user', content: 'this is forbidden' }]),
    ).toMatchObject({ status: 403, code: 'guardrail_blocked' })

    // A new version of the filters replaces the compiled one at once.
    await operator(gw, 'PATCH', `/guardrails/${guardrailId}`, { filters: block(['banned']) })
    expect(
      await chatOutcome(gw, key, 'test/other', [{ role: 'user', content: 'this is forbidden' }]),
    ).toMatchObject({ status: 200 })
    expect(
      await chatOutcome(gw, key, 'test/other', [{ role: 'user', content: 'this is banned' }]),
    ).toMatchObject({ status: 403, code: 'guardrail_blocked' })

    const deleted = await operator(gw, 'DELETE', `/guardrails/${guardrailId}`)
    expect(deleted.body.unassignedKeyIds).toEqual([keyId])
    expect(
      await chatOutcome(gw, key, 'test/cheap', [{ role: 'user', content: 'this is banned' }]),
    ).toMatchObject({ status: 200 })
    expect(
      (await operator(gw, 'PATCH', `/keys/${keyId}`, { rpmLimit: 10 })).body.guardrailId,
    ).toBeNull()
  })

  test('a key cannot be given a guardrail of another account, or one that does not exist', async () => {
    const { id: keyId } = await gw.key(accountId)
    const foreign = await operator(gw, 'POST', `/accounts/${otherAccountId}/guardrails`, {
      name: 'Theirs',
    })
    expect(
      expectRefusal(
        await operator(gw, 'PATCH', `/keys/${keyId}`, { guardrailId: foreign.body.id }),
        400,
        'invalid_request',
        'guardrailId',
      ),
    ).toContain('no guardrail')
    expectRefusal(
      await operator(gw, 'PATCH', `/keys/${keyId}`, { guardrailId: 'grd_missing' }),
      400,
      'invalid_request',
      'guardrailId',
    )
    expect(
      (await operator(gw, 'PATCH', `/keys/${keyId}`, { guardrailId: null })).body.guardrailId,
    ).toBeNull()
  })
})
