// Every error code of the spec that can arise on the API server, provoked for real, in every client
// style it applies to: the status, `error.code`, `x-service-error-code`, `Retry-After` where the spec
// requires it, the style's error shape, and that no hold remains and nothing was charged.
// (`trial_exhausted` and `request_in_progress` belong to the dashboard's free chat, not to the API.)
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { errorTable, type ErrorCode } from '../../../shared/errors.ts'
import {
  startGatewayOnOwnRedis,
  startTestGateway,
  testModel,
  type TestGateway,
} from '../../helpers/gateway.ts'
import { holdsEnded, ledgerOf, settledAccount } from '../../helpers/ledger.ts'
import { describeWith, uniqueName } from '../../helpers/services.ts'

type Style = 'chat' | 'messages' | 'responses'
const STYLES: Style[] = ['chat', 'messages', 'responses']

const free = { inputPerMTok: 0, outputPerMTok: 0 }
const models = [
  testModel('test/cheap', 'cheap'),
  testModel('test/policy', 'policy?status=400&code=content_policy_violation'),
  testModel('test/down', 'down?status=500'),
  testModel('test/limited', 'limited?status=429'),
  testModel('test/garbage', 'garbage?garbage=1'),
  testModel('test/hang', 'hang?delay=1000'),
  testModel('test/breaks', 'breaks?break=2&tokens=60'),
  testModel('test/small', 'small', { contextLength: 200, maxOutputTokens: 50 }),
  testModel('test/free', 'free', { pricing: free, free: true }),
  testModel('test/paused', 'paused', { routes: [{ provider: 'fake-b', model: 'paused' }] }),
  testModel('test/unkeyed', 'unkeyed', { routes: [{ provider: 'unkeyed', model: 'unkeyed' }] }),
]
const catalog = {
  aliases: [{ id: 'test/dangling', target: 'test/retired' }],
  auto: [
    { id: 'service/auto', candidates: ['test/cheap'] },
    { id: 'service/auto:free', free: true, candidates: ['test/free'] },
  ],
  images: [
    {
      id: 'test/image',
      routes: [{ provider: 'fake', model: 'image' }],
      defaultSize: '1024x1024',
      defaultQuality: 'standard',
      prices: { '1024x1024/standard': 0.04 },
    },
    {
      id: 'test/image-off',
      routes: [{ provider: 'unkeyed', model: 'image' }],
      defaultSize: '1024x1024',
      defaultQuality: 'standard',
      prices: { '1024x1024/standard': 0.04 },
    },
  ],
}

type Caller = { accountId: string; keyId: string; key: string }
type Request = {
  model?: string
  text?: string
  stream?: boolean
  maxTokens?: number
  extra?: Record<string, unknown>
  key?: string
}
type Context = {
  gw: TestGateway
  caller: Caller
  send(style: Style, request: Request): Promise<Response>
}

type Case = {
  code: ErrorCode
  /** What provokes it. */
  how: string
  styles?: Style[]
  /** The spec requires Retry-After; a number: exactly that many seconds. */
  retryAfter?: true | number
  /** The refusal comes as an event of a stream already answered with 200. */
  inStream?: boolean
  /** The account may be charged (delivered output); otherwise nothing may be. */
  mayCharge?: boolean
  /** The account's balance in USD (default 1). */
  balance?: string
  prepare?(context: Context): Promise<void>
  provoke(context: Context, style: Style): Promise<Response>
}

const cases: Case[] = [
  {
    code: 'invalid_request',
    how: 'an empty message list',
    provoke: (c, s) => c.send(s, { extra: s === 'responses' ? { input: 42 } : { messages: [] } }),
  },
  {
    code: 'context_too_long',
    how: 'a prompt beyond the context',
    provoke: (c, s) =>
      c.send(s, { model: 'test/small', text: 'lorem ipsum dolor sit amet '.repeat(100) }),
  },
  {
    code: 'provider_policy_rejected',
    how: 'the provider rejects the content',
    provoke: (c, s) => c.send(s, { model: 'test/policy' }),
  },
  {
    code: 'invalid_api_key',
    how: 'an unknown key',
    provoke: (c, s) => c.send(s, { key: `svc-live-${'2'.repeat(26)}` }),
  },
  {
    code: 'insufficient_credits',
    how: 'a worst case above the balance',
    balance: '0.000001',
    provoke: (c, s) => c.send(s, { maxTokens: 1_000 }),
  },
  {
    code: 'model_not_allowed',
    how: "a model outside the key's allowlist",
    prepare: async (c) => {
      await c.gw.app.gateway
        .sql`UPDATE api_keys SET allowed_models = ${['test/free']} WHERE id = ${c.caller.keyId}`
      await c.gw.app.gateway.keys.invalidate({ accountId: c.caller.accountId })
    },
    provoke: (c, s) => c.send(s, {}),
  },
  {
    code: 'spend_limit_exceeded',
    how: "the key's daily cap",
    prepare: async (c) => {
      await c.gw.app.gateway
        .sql`UPDATE api_keys SET daily_limit_nano = 1000 WHERE id = ${c.caller.keyId}`
      await c.gw.app.gateway.keys.invalidate({ accountId: c.caller.accountId })
    },
    provoke: (c, s) => c.send(s, {}),
  },
  {
    code: 'guardrail_blocked',
    how: 'a blocking filter matches',
    prepare: async (c) => {
      const id = uniqueName('gr_')
      const filters = c.gw.app.gateway.sql.json([{ detector: 'email', action: 'block' }])
      await c.gw.app.gateway
        .sql`INSERT INTO guardrails (id, account_id, name, filters) VALUES (${id}, ${c.caller.accountId}, 'no mail', ${filters})`
      await c.gw.app.gateway
        .sql`UPDATE api_keys SET guardrail_id = ${id} WHERE id = ${c.caller.keyId}`
      await c.gw.app.gateway.keys.invalidate({ accountId: c.caller.accountId })
    },
    provoke: (c, s) => c.send(s, { text: 'write to jane.doe@example.com' }),
  },
  {
    code: 'account_suspended',
    how: 'a suspended account',
    prepare: async (c) => {
      await c.gw.app.gateway
        .sql`UPDATE accounts SET status = 'suspended' WHERE id = ${c.caller.accountId}`
      await c.gw.app.gateway.keys.invalidate({ accountId: c.caller.accountId })
    },
    provoke: (c, s) => c.send(s, {}),
  },
  {
    code: 'unknown_model',
    how: 'a model not in the catalog',
    provoke: (c, s) => c.send(s, { model: 'test/nope' }),
  },
  {
    code: 'payload_too_large',
    how: 'a body above 32 MB',
    styles: ['chat'],
    provoke: (c, s) => c.send(s, { text: 'x'.repeat(33 * 1024 * 1024) }),
  },
  {
    code: 'free_quota_exceeded',
    how: 'the free allowance used up',
    retryAfter: true,
    prepare: async (c) => {
      for (let i = 0; i < 2; i++)
        expect((await c.send('chat', { model: 'service/auto:free' })).status).toBe(200)
    },
    provoke: (c, s) => c.send(s, { model: 'service/auto:free' }),
  },
  {
    code: 'usage_limit_exceeded',
    how: "the key's requests per minute",
    retryAfter: true,
    prepare: async (c) => {
      await c.gw.app.gateway.sql`UPDATE api_keys SET rpm_limit = 1 WHERE id = ${c.caller.keyId}`
      await c.gw.app.gateway.keys.invalidate({ accountId: c.caller.accountId })
      expect((await c.send('chat', {})).status).toBe(200)
    },
    provoke: (c, s) => c.send(s, {}),
  },
  {
    code: 'upstream_error',
    how: 'a stream that breaks after it began',
    inStream: true,
    mayCharge: true,
    provoke: (c, s) => c.send(s, { model: 'test/breaks', stream: true }),
  },
  {
    code: 'image_request_failed',
    how: 'the provider fails an image',
    styles: ['chat'],
    provoke: (c) =>
      c.gw.app.api.handle(
        imageRequest(c.caller.key, { model: 'test/image', prompt: 'a cat [[status=500]]' }),
      ),
  },
  {
    code: 'model_alias_unavailable',
    how: 'an alias that leads nowhere',
    provoke: (c, s) => c.send(s, { model: 'test/dangling' }),
  },
  {
    code: 'model_unavailable',
    how: 'the provider fails with 500',
    provoke: (c, s) => c.send(s, { model: 'test/down' }),
  },
  {
    code: 'no_available_route',
    how: 'no provider with a key',
    provoke: (c, s) => c.send(s, { model: 'test/unkeyed' }),
  },
  {
    code: 'upstream_rate_limited',
    how: 'the provider answers 429',
    provoke: (c, s) => c.send(s, { model: 'test/limited' }),
  },
  {
    code: 'auto_unresolvable',
    how: 'no automatic candidate allowed for the key',
    prepare: async (c) => {
      await c.gw.app.gateway
        .sql`UPDATE api_keys SET allowed_models = ${['test/free']} WHERE id = ${c.caller.keyId}`
      await c.gw.app.gateway.keys.invalidate({ accountId: c.caller.accountId })
    },
    provoke: (c, s) => c.send(s, { model: 'service/auto' }),
  },
  {
    code: 'upstream_response_invalid',
    how: 'an answer that is not JSON',
    provoke: (c, s) => c.send(s, { model: 'test/garbage' }),
  },
  {
    code: 'upstream_response_invalid',
    how: 'a stream asked for, and an HTML page answered',
    provoke: (c, s) => c.send(s, { model: 'test/garbage', stream: true }),
  },
  {
    code: 'images_unavailable',
    how: 'an image model without a usable route',
    styles: ['chat'],
    provoke: (c) =>
      c.gw.app.api.handle(imageRequest(c.caller.key, { model: 'test/image-off', prompt: 'a cat' })),
  },
  {
    code: 'upstream_capacity_unavailable',
    how: "the operator paused the model's provider",
    retryAfter: true,
    provoke: (c, s) => c.send(s, { model: 'test/paused' }),
  },
  {
    code: 'overloaded',
    how: 'the gateway at its concurrent-request ceiling',
    retryAfter: 5,
    provoke: async (c, s) => {
      const ceiling = c.gw.app.gateway.ceiling
      // Fill the ceiling as concurrent requests would, then ask.
      const taken: number[] = []
      while (ceiling.enter()) taken.push(1)
      try {
        return await c.send(s, {})
      } finally {
        for (const _ of taken) ceiling.leave()
      }
    },
  },
  {
    code: 'request_timeout',
    how: 'no complete answer in time',
    provoke: (c, s) => c.send(s, { model: 'test/hang' }),
  },
]

function imageRequest(key: string, body: Record<string, unknown>): globalThis.Request {
  return new Request('http://gateway.test/v1/images/generations', {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
}

function requestFor(style: Style, caller: Caller, request: Request): globalThis.Request {
  const model = request.model ?? 'test/cheap'
  const text = request.text ?? 'hello'
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  const key = request.key ?? caller.key
  let path: string
  let body: Record<string, unknown>
  if (style === 'messages') {
    path = '/v1/messages'
    headers['x-api-key'] = key
    headers['anthropic-version'] = '2023-06-01'
    body = {
      model,
      max_tokens: request.maxTokens ?? 20,
      messages: [{ role: 'user', content: text }],
    }
  } else if (style === 'responses') {
    path = '/v1/responses'
    headers.authorization = `Bearer ${key}`
    body = {
      model,
      input: text,
      ...(request.maxTokens ? { max_output_tokens: request.maxTokens } : {}),
    }
  } else {
    path = '/v1/chat/completions'
    headers.authorization = `Bearer ${key}`
    body = {
      model,
      messages: [{ role: 'user', content: text }],
      ...(request.maxTokens ? { max_tokens: request.maxTokens } : {}),
    }
  }
  if (request.stream) body.stream = true
  return new Request(`http://gateway.test${path}`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ ...body, ...request.extra }),
  })
}

/** The error of a response in the style's shape: OpenAI-style `{error: {message, type, code}}`, Messages `{type: 'error', error: {type, message, code}}`. */
async function errorOf(
  style: Style,
  response: Response,
  inStream: boolean,
): Promise<{ code: unknown; type: unknown; message: unknown }> {
  if (!inStream) {
    const body = (await response.json()) as {
      type?: string
      error: { code: unknown; type: unknown; message: unknown }
    }
    if (style === 'messages') expect(body.type).toBe('error')
    return body.error
  }
  const text = await response.text()
  const events = text.split('\n\n').flatMap((event) =>
    event
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => line.slice(6)),
  )
  type Event = {
    type?: string
    code?: unknown
    message?: unknown
    error?: { code: unknown; type: unknown; message: unknown }
  }
  const failure = events
    .filter((data) => data.startsWith('{'))
    .map((data) => JSON.parse(data) as Event)
    .find((event) => event.error || event.type === 'error')
  // The Responses style's error event carries the code itself: {type: 'error', code, message}.
  if (style === 'responses' && failure && !failure.error)
    return {
      code: failure.code,
      type: errorTable.upstream_error.openaiType,
      message: failure.message,
    }
  return failure?.error ?? { code: undefined, type: undefined, message: undefined }
}

describeWith(['postgres', 'redis'], 'every API error code', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({
      store: 'redis',
      database: 'postgres',
      models,
      catalog,
      env: {
        UPSTREAM_TIMEOUT_MS: '400',
        FREE_REQUESTS_PER_DAY: '2',
        INVALID_KEYS_PER_MINUTE: '1000',
      },
    })
    await gw.app.gateway
      .sql`INSERT INTO provider_pauses (provider_id, paused_until) VALUES ('fake-b', now() + interval '1 hour')
      ON CONFLICT (provider_id) DO UPDATE SET paused_until = excluded.paused_until`
    await gw.app.gateway.health.refreshPauses(gw.app.gateway.sql)
  })
  afterAll(async () => {
    await gw.app.gateway.sql`DELETE FROM provider_pauses WHERE provider_id = 'fake-b'`
    await gw.close()
  })

  test('the table covers every code of the spec that the API server can give', () => {
    const dashboardOnly = new Set(['trial_exhausted', 'request_in_progress'])
    const own = new Set([
      'not_found',
      'unauthorized',
      'forbidden',
      'conflict',
      'internal_error',
      'admission_unconfirmed',
    ])
    const spec = Object.keys(errorTable).filter(
      (code) => !dashboardOnly.has(code) && !own.has(code),
    )
    expect([...new Set(cases.map((c): string => c.code))].toSorted()).toEqual(spec.toSorted())
  })

  for (const item of cases) {
    describe(`${errorTable[item.code].status} ${item.code}: ${item.how}`, () => {
      for (const style of item.styles ?? STYLES) {
        test(style, async () => {
          const accountId = await gw.account(item.balance ?? '1')
          const created = await gw.key(accountId)
          const caller = { accountId, keyId: created.id, key: created.key }
          const context: Context = {
            gw,
            caller,
            send: (s, request) => gw.app.api.handle(requestFor(s, caller, request)),
          }
          await item.prepare?.(context)
          await settledAccount(gw, accountId)
          const before = (await ledgerOf(gw, accountId)).filter(
            (row) => row.kind === 'charge',
          ).length
          const response = await item.provoke(context, style)

          expect(response.status).toBe(item.inStream ? 200 : errorTable[item.code].status)
          if (!item.inStream) expect(response.headers.get('x-service-error-code')).toBe(item.code)
          const error = await errorOf(style, response, item.inStream ?? false)
          expect(error.code).toBe(item.code)
          expect(error.type).toBe(
            style === 'messages'
              ? errorTable[item.code].messagesType
              : errorTable[item.code].openaiType,
          )
          expect(typeof error.message).toBe('string')
          const retryAfter = response.headers.get('retry-after')
          if (item.retryAfter === true) expect(Number(retryAfter)).toBeGreaterThan(0)
          else if (typeof item.retryAfter === 'number')
            expect(retryAfter).toBe(String(item.retryAfter))

          expect(await holdsEnded(gw, accountId)).toMatchObject({ heldNano: 0, inFlight: 0 })
          if (!item.mayCharge)
            expect(
              (await ledgerOf(gw, accountId)).filter((row) => row.kind === 'charge'),
            ).toHaveLength(before)
        })
      }
    })
  }
})

describeWith('postgres', 'admission_unconfirmed in the error table', () => {
  let gw: Awaited<ReturnType<typeof startGatewayOnOwnRedis>>
  beforeAll(async () => {
    gw = await startGatewayOnOwnRedis()
  })
  afterAll(() => gw.close())

  test('502 admission_unconfirmed in every style when the admission store is gone, nothing sent', async () => {
    const accountId = await gw.account('1')
    const created = await gw.key(accountId)
    const caller = { accountId, keyId: created.id, key: created.key }
    expect((await gw.app.api.handle(requestFor('chat', caller, {}))).status).toBe(200)
    await gw.redis.kill()
    const sent = gw.upstream.requests.length
    for (const style of STYLES) {
      const response = await gw.app.api.handle(requestFor(style, caller, {}))
      expect(response.status).toBe(502)
      expect(response.headers.get('x-service-error-code')).toBe('admission_unconfirmed')
      const error = await errorOf(style, response, false)
      expect(error.code).toBe('admission_unconfirmed')
      expect(error.type).toBe(
        style === 'messages'
          ? errorTable.admission_unconfirmed.messagesType
          : errorTable.admission_unconfirmed.openaiType,
      )
    }
    expect(gw.upstream.requests.length).toBe(sent)
  })
})
