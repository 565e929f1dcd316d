// The service headers on every route of the API server, over HTTP, on success and on refusals: the
// request ID always; the cost always (0 when nothing was charged); the available balance whenever the
// key is known, whether or not the request reached admission; the error code on errors; model and
// provider once a model served.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { nanoToUsd } from '../../../shared/money.ts'
import { testModel } from '../../helpers/gateway.ts'
import { holdsEnded } from '../../helpers/ledger.ts'
import { describeWith } from '../../helpers/services.ts'
import { startImageGateway, type ImageGateway } from '../pipeline/images/image-gateway.ts'

type Stores = { store: 'memory' | 'redis'; database: 'postgres' | 'embedded' }
type Case = {
  name: string
  method: string
  path: string
  body?: unknown
  key?: 'valid' | 'other' | 'invalid' | 'none'
  status: number
  served?: boolean
  charged?: boolean
}

const chat = (extra: Record<string, unknown> = {}) => ({
  model: 'test/cheap',
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
})
const messages = (extra: Record<string, unknown> = {}) => ({
  model: 'test/cheap',
  max_tokens: 16,
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
})

function everyRoute(stores: Stores) {
  let gw: ImageGateway
  let apiUrl: string
  let accountId: string
  let key: string
  let keyId: string
  let otherKey: string
  let storedId: string
  let imageRequestId: string

  beforeAll(async () => {
    gw = await startImageGateway({
      ...stores,
      models: [testModel('test/cheap', 'fake'), testModel('test/down', 'fake?status=500')],
    })
    apiUrl = gw.app.listen({ apiOnly: true }).apiUrl
    accountId = await gw.account('5')
    ;({ key, id: keyId } = await gw.key(accountId))
    otherKey = (await gw.key(await gw.account('0'))).key
  })
  afterAll(() => gw.close())

  const send = async (testCase: Case): Promise<Response> => {
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    const as = {
      valid: key,
      other: otherKey,
      invalid: 'svc-live-1111111111111111111111111x',
      none: undefined,
    }[testCase.key ?? 'valid']
    if (as) headers.authorization = `Bearer ${as}`
    const body =
      testCase.body === undefined
        ? undefined
        : typeof testCase.body === 'string'
          ? testCase.body
          : JSON.stringify(testCase.body)
    return fetch(`${apiUrl}${testCase.path}`, { method: testCase.method, headers, body })
  }

  /** The balance the account has now, as the header says it. */
  const balanceOf = async (account: string) =>
    nanoToUsd(Math.max(0, (await gw.app.gateway.store.snapshot(account)).availableNano))

  const check = async (testCase: Case) => {
    // Earlier requests settle after their answers: the balance is compared once they have.
    await holdsEnded(gw, accountId)
    const response = await send(testCase)
    const text = await response.text()
    const headers = Object.fromEntries(response.headers)
    const keyKnown =
      testCase.key === undefined || testCase.key === 'valid' || testCase.key === 'other'
    expect({ case: testCase.name, status: response.status }).toEqual({
      case: testCase.name,
      status: testCase.status,
    })
    expect(headers['x-request-id']).toMatch(/^req_/)
    if (testCase.charged) expect(Number(headers['x-service-cost-usd'])).toBeGreaterThan(0)
    else
      expect({ case: testCase.name, cost: headers['x-service-cost-usd'] }).toEqual({
        case: testCase.name,
        cost: '0',
      })
    if (keyKnown) {
      const account = testCase.key === 'other' ? undefined : accountId
      expect({
        case: testCase.name,
        hasBalance: headers['x-service-balance-usd'] !== undefined,
      }).toEqual({ case: testCase.name, hasBalance: true })
      if (account && !testCase.charged)
        expect(headers['x-service-balance-usd']).toBe(await balanceOf(account))
    } else expect(headers['x-service-balance-usd']).toBeUndefined()
    if (response.status >= 400)
      expect(headers['x-service-error-code']).toBe(
        (JSON.parse(text) as { error: { code?: string; type?: string } }).error.code ??
          headers['x-service-error-code'],
      )
    else expect(headers['x-service-error-code']).toBeUndefined()
    if (testCase.served) expect(headers['x-service-model']).toBeDefined()
    return { response, text }
  }

  test('model requests in the three styles: success and each kind of refusal', async () => {
    for (const prefix of ['/v1', '/api/v1']) {
      const cases: Case[] = [
        {
          name: 'chat',
          method: 'POST',
          path: `${prefix}/chat/completions`,
          body: chat(),
          status: 200,
          served: true,
          charged: true,
        },
        {
          name: 'messages',
          method: 'POST',
          path: `${prefix}/messages`,
          body: messages(),
          status: 200,
          served: true,
          charged: true,
        },
        {
          name: 'responses',
          method: 'POST',
          path: `${prefix}/responses`,
          body: { model: 'test/cheap', input: 'hi' },
          status: 200,
          served: true,
          charged: true,
        },
        {
          name: 'no key',
          method: 'POST',
          path: `${prefix}/chat/completions`,
          body: chat(),
          key: 'none',
          status: 401,
        },
        {
          name: 'invalid key',
          method: 'POST',
          path: `${prefix}/messages`,
          body: messages(),
          key: 'invalid',
          status: 401,
        },
        {
          name: 'bad body',
          method: 'POST',
          path: `${prefix}/chat/completions`,
          body: '{"model":',
          status: 400,
        },
        {
          name: 'unknown field',
          method: 'POST',
          path: `${prefix}/messages`,
          body: messages({ nope: 1 }),
          status: 400,
        },
        {
          name: 'unknown model',
          method: 'POST',
          path: `${prefix}/responses`,
          body: { model: 'test/nope', input: 'hi' },
          status: 404,
        },
        {
          name: 'no credit',
          method: 'POST',
          path: `${prefix}/chat/completions`,
          body: chat(),
          key: 'other',
          status: 402,
        },
        {
          name: 'provider down',
          method: 'POST',
          path: `${prefix}/chat/completions`,
          body: chat({ model: 'test/down' }),
          status: 503,
        },
        {
          name: 'stream refused',
          method: 'POST',
          path: `${prefix}/messages`,
          body: messages({ model: 'test/nope', stream: true }),
          status: 404,
        },
      ]
      for (const testCase of cases) await check(testCase)
    }
  })

  test('the catalog, stored responses, images, image status, claim and rotation', async () => {
    const stored = await check({
      name: 'store',
      method: 'POST',
      path: '/v1/responses',
      body: { model: 'test/cheap', input: 'hi' },
      status: 200,
      served: true,
      charged: true,
    })
    storedId = (JSON.parse(stored.text) as { id: string }).id
    const image = await check({
      name: 'image',
      method: 'POST',
      path: '/v1/images/generations',
      body: { model: 'test/image', prompt: 'a cat' },
      status: 200,
      served: true,
      charged: true,
    })
    imageRequestId = image.response.headers.get('x-request-id')!
    const cases: Case[] = [
      { name: 'models', method: 'GET', path: '/v1/models', status: 200 },
      { name: 'models, no key', method: 'GET', path: '/v1/models', key: 'none', status: 401 },
      { name: 'stored response', method: 'GET', path: `/v1/responses/${storedId}`, status: 200 },
      {
        name: 'stored response of another account',
        method: 'GET',
        path: `/v1/responses/${storedId}`,
        key: 'other',
        status: 404,
      },
      {
        name: 'image status',
        method: 'GET',
        path: `/v1/images/status?request_id=${imageRequestId}`,
        status: 200,
      },
      { name: 'image status without an ID', method: 'GET', path: '/v1/images/status', status: 400 },
      {
        name: 'image status, invalid key',
        method: 'GET',
        path: `/v1/images/status?request_id=${imageRequestId}`,
        key: 'invalid',
        status: 401,
      },
      {
        name: 'image, bad body',
        method: 'POST',
        path: '/v1/images/generations',
        body: { model: 'test/image' },
        status: 400,
      },
      {
        name: 'claim by e-mail',
        method: 'POST',
        path: '/me/claim',
        body: { email: 'a@example.com' },
        status: 202,
      },
      {
        name: 'claim with a bad body',
        method: 'POST',
        path: '/me/claim',
        body: { email: 1 },
        status: 400,
      },
      {
        name: 'rotation of another key',
        method: 'POST',
        path: `/keys/${keyId}/rotate`,
        key: 'other',
        status: 403,
      },
      {
        name: 'delete stored response',
        method: 'DELETE',
        path: `/v1/responses/${storedId}`,
        status: 200,
      },
      { name: 'rotation', method: 'POST', path: `/keys/${keyId}/rotate`, status: 201 },
    ]
    for (const testCase of cases) await check(testCase)
  })

  test('a path the API does not have: the error code and a zero cost', async () => {
    const response = await fetch(`${apiUrl}/v1/nothing-here`, { method: 'POST' })
    expect(response.status).toBe(404)
    expect(response.headers.get('x-service-error-code')).toBe('not_found')
    expect(response.headers.get('x-service-cost-usd')).toBe('0')
  })
}

describe('response headers on every route (embedded stores)', () =>
  everyRoute({ store: 'memory', database: 'embedded' }))
describeWith(['postgres', 'redis'], 'response headers on every route (PostgreSQL and Redis)', () =>
  everyRoute({ store: 'redis', database: 'postgres' }),
)
