// Every refusal this path can give: the spec's status, error.code and x-service-error-code, in the
// Chat Completions error shape, and no hold left behind.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { ErrorCode } from '../../../shared/errors.ts'
import { nanoToUsd } from '../../../shared/money.ts'
import { readEvents, startTestGateway, testModel, type TestGateway } from '../../helpers/gateway.ts'
import { describeWith } from '../../helpers/services.ts'

const models = [
  testModel('test/cheap', 'fake'),
  testModel('test/other', 'fake'),
  // Ten times the price of test/cheap: a fallback from it must be charged at test/cheap's price.
  testModel('test/fail', 'fake?status=500', { pricing: { inputPerMTok: 10, outputPerMTok: 20 } }),
  testModel('test/limited', 'fake?status=429'),
  testModel('test/limited-wait', 'fake?status=429&retryAfter=7'),
  testModel('test/overloaded-wait', 'fake?status=529&retryAfter=4'),
  testModel('test/policy', 'fake?status=400&code=content_policy_violation'),
  testModel('test/bad-param', 'fake?status=400'),
  testModel('test/garbage', 'fake?garbage=1'),
  testModel('test/slow', 'fake?delay=1500'),
  testModel('test/stream-error', 'fake?errorAfter=3&tokens=10'),
  testModel('test/stall', 'fake?stall=1'),
  testModel('test/error-first', 'fake?errorAfter=0'),
  { ...testModel('test/unkeyed', 'fake'), routes: [{ provider: 'unkeyed', model: 'fake' }] },
]
const hello = [{ role: 'user', content: 'hello' }]

async function expectError(response: Response, status: number, code: ErrorCode) {
  const body = (await response.json()) as {
    error: { code: string; message: string; type: string; param: string | null }
  }
  expect({
    status: response.status,
    code: body.error.code,
    header: response.headers.get('x-service-error-code'),
  }).toEqual({ status, code, header: code })
  expect(response.headers.get('x-request-id')).toMatch(/^req_/)
  expect(body.error.message.length).toBeGreaterThan(10)
  expect(typeof body.error.type).toBe('string')
  return body.error
}

describeWith('postgres', 'Chat Completions refusals', () => {
  let gw: TestGateway
  let accountId: string
  let key: string
  beforeAll(async () => {
    gw = await startTestGateway({
      store: 'memory',
      database: 'postgres',
      models,
      env: { UPSTREAM_TIMEOUT_MS: '400', STREAM_IDLE_TIMEOUT_MS: '300' },
    })
    accountId = await gw.account('10')
    key = (await gw.key(accountId)).key
  })
  afterAll(() => gw.close())

  const chat = (body: unknown, as = key) => gw.chat(as, body)
  const noHoldsLeft = async () => {
    await Bun.sleep(20)
    expect(await gw.app.gateway.store.snapshot(accountId)).toMatchObject({
      heldNano: 0,
      inFlight: 0,
    })
  }

  describe('400 invalid_request', () => {
    test('names the missing or malformed field', async () => {
      expect(
        (await expectError(await chat({ model: 'test/cheap' }), 400, 'invalid_request')).param,
      ).toBe('messages')
      expect(
        (
          await expectError(
            await chat({ model: 'test/cheap', messages: [] }),
            400,
            'invalid_request',
          )
        ).message,
      ).toBe('messages: must be a non-empty array')
      expect(
        (
          await expectError(
            await chat({ model: 'test/cheap', messages: [{ role: 'user' }] }),
            400,
            'invalid_request',
          )
        ).param,
      ).toBe('messages[0].content')
    })

    test('refuses fields outside the style and stream_options without stream', async () => {
      expect(
        (
          await expectError(
            await chat({ model: 'test/cheap', messages: hello, temprature: 1 }),
            400,
            'invalid_request',
          )
        ).message,
      ).toBe('Unrecognized request argument supplied: temprature')
      expect(
        (
          await expectError(
            await chat({
              model: 'test/cheap',
              messages: hello,
              stream_options: { include_usage: true },
            }),
            400,
            'invalid_request',
          )
        ).param,
      ).toBe('stream_options')
    })

    test('refuses a body that is not JSON', async () => {
      await expectError(await chat('{"model": '), 400, 'invalid_request')
    })

    test('names a base URL that already ends in /chat/completions', async () => {
      const response = await gw.app.api.handle(
        new Request('http://gateway.test/v1/chat/completions/chat/completions', {
          method: 'POST',
          body: '{}',
          headers: { authorization: `Bearer ${key}` },
        }),
      )
      expect((await expectError(response, 400, 'invalid_request')).message).toContain(
        'Wrong base URL',
      )
    })

    test('the /api/v1 alias serves the same endpoint', async () => {
      const response = await gw.app.api.handle(
        new Request('http://gateway.test/api/v1/chat/completions', {
          method: 'POST',
          body: JSON.stringify({ model: 'test/cheap', messages: hello }),
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        }),
      )
      expect(response.status).toBe(200)
    })
  })

  test('413 payload_too_large above 32 MB', async () => {
    const huge = JSON.stringify({
      model: 'test/cheap',
      messages: [{ role: 'user', content: 'x'.repeat(33 * 1024 * 1024) }],
    })
    await expectError(await chat(huge), 413, 'payload_too_large')
  })

  describe('401 invalid_api_key', () => {
    test('for a missing, malformed or unknown key, without echoing it', async () => {
      await expectError(
        await gw.chat(undefined, { model: 'test/cheap', messages: hello }),
        401,
        'invalid_api_key',
      )
      const malformed = await expectError(
        await chat({ model: 'test/cheap', messages: hello }, 'sk-not-ours'),
        401,
        'invalid_api_key',
      )
      expect(malformed.message).not.toContain('sk-not-ours')
      await expectError(
        await chat({ model: 'test/cheap', messages: hello }, 'svc-live-11111111111111111111111111'),
        401,
        'invalid_api_key',
      )
      await expectError(
        await chat(
          { model: 'test/cheap', messages: hello },
          `${key.slice(0, 20)}${'z'.repeat(15)}`,
        ),
        401,
        'invalid_api_key',
      )
    })

    test('whatever the body: a request without a valid key is 401 before its body is judged', async () => {
      const unknown = 'svc-live-11111111111111111111111111'
      await expectError(
        await chat({ model: 'test/cheap', messages: [] }, unknown),
        401,
        'invalid_api_key',
      )
      await expectError(await gw.chat(undefined, {}), 401, 'invalid_api_key')
      await expectError(
        await chat({ model: 'test/cheap', messages: hello, unknown_field: 1 }, unknown),
        401,
        'invalid_api_key',
      )
      const notJson = await gw.app.api.handle(
        new Request('http://gateway.test/v1/chat/completions', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"model":',
        }),
      )
      await expectError(notJson, 401, 'invalid_api_key')
      // With a valid key the body's problem is the answer, and the request is in the account's log.
      const refused = await chat({ model: 'test/cheap', messages: [] })
      const requestId = refused.headers.get('x-request-id')!
      await expectError(refused, 400, 'invalid_request')
      await gw.app.gateway.writer.drain()
      const logged = await gw.app.gateway.sql<{ status: number; error_code: string }[]>`
        SELECT status, error_code FROM request_logs WHERE request_id = ${requestId}`
      expect([...logged]).toEqual([{ status: 400, error_code: 'invalid_request' }])
    })

    test('for a revoked or expired key', async () => {
      const revoked = await gw.key(accountId)
      expect((await chat({ model: 'test/cheap', messages: hello }, revoked.key)).status).toBe(200)
      await gw.app.gateway.sql`UPDATE api_keys SET status = 'revoked' WHERE id = ${revoked.id}`
      await gw.app.gateway.keys.invalidate({ accountId })
      await expectError(
        await chat({ model: 'test/cheap', messages: hello }, revoked.key),
        401,
        'invalid_api_key',
      )
      const expired = await gw.key(accountId)
      await gw.app.gateway
        .sql`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = ${expired.id}`
      await gw.app.gateway.keys.invalidate({ accountId })
      await expectError(
        await chat({ model: 'test/cheap', messages: hello }, expired.key),
        401,
        'invalid_api_key',
      )
    })
  })

  test('403 account_suspended', async () => {
    const suspended = await gw.account('1')
    const its = await gw.key(suspended)
    await gw.app.gateway.sql`UPDATE accounts SET status = 'suspended' WHERE id = ${suspended}`
    await gw.app.gateway.keys.invalidate({ accountId: suspended })
    await expectError(
      await chat({ model: 'test/cheap', messages: hello }, its.key),
      403,
      'account_suspended',
    )
  })

  test('404 unknown_model suggests the full ID for a bare name', async () => {
    const error = await expectError(
      await chat({ model: 'cheap', messages: hello }),
      404,
      'unknown_model',
    )
    expect(error.message).toContain('did you mean test/cheap?')
    await expectError(await chat({ model: 'test/nope', messages: hello }), 404, 'unknown_model')
    expect(
      (
        await expectError(
          await chat({ model: 'test/cheap', messages: hello, models: ['test/nope'] }),
          404,
          'unknown_model',
        )
      ).param,
    ).toBe('models[0]')
  })

  test('403 model_not_allowed suggests a model the key may use', async () => {
    const limited = await gw.key(accountId, { allowedModels: ['test/other'] })
    const error = await expectError(
      await chat({ model: 'test/cheap', messages: hello }, limited.key),
      403,
      'model_not_allowed',
    )
    expect(error.message).toContain('test/other')
    expect((await chat({ model: 'test/other', messages: hello }, limited.key)).status).toBe(200)
  })

  test('402 insufficient_credits reports the balance, nothing sent or charged', async () => {
    const poor = await gw.account('0.001')
    const its = await gw.key(poor)
    const before = gw.upstream.requests.length
    const response = await chat({ model: 'test/cheap', messages: hello }, its.key)
    expect(response.headers.get('x-service-balance-usd')).toBe('0.001')
    const error = await expectError(response, 402, 'insufficient_credits')
    expect(error.message).toContain('$0.001')
    expect(error.message).toContain('or lower max_completion_tokens.')
    expect(gw.upstream.requests.length).toBe(before)
    expect((await gw.app.gateway.store.snapshot(poor)).balanceNano).toBe(1_000_000)
  })

  test('403 spend_limit_exceeded names the limit and its reset time', async () => {
    const capped = await gw.key(accountId, { dailyLimitNano: 1_000 })
    const error = await expectError(
      await chat({ model: 'test/cheap', messages: hello, max_tokens: 10 }, capped.key),
      403,
      'spend_limit_exceeded',
    )
    const midnight = new Date((Math.floor(Date.now() / 86_400_000) + 1) * 86_400_000)
      .toISOString()
      .replace('.000Z', 'Z')
    expect(error.message).toContain('daily spend limit of $0.000001')
    expect(error.message).toContain(`resets at ${midnight}`)
  })

  test('403 spend_limit_exceeded for a request that alone costs more than the cap says what to lower', async () => {
    const capped = await gw.key(accountId, { dailyLimitNano: 1_000_000 })
    const within = await chat({ model: 'test/cheap', messages: hello, max_tokens: 10 }, capped.key)
    expect(within.status).toBe(200)
    const response = await chat(
      { model: 'test/cheap', messages: hello, max_completion_tokens: 1_000 },
      capped.key,
    )
    const error = await expectError(response, 403, 'spend_limit_exceeded')
    expect(error.message).toContain('daily spend limit of $0.001 would be exceeded')
    expect(error.message).toContain('more than the whole limit. Lower max_completion_tokens')
    expect(error.message).toMatch(/resets at \d{4}-\d\d-\d\dT00:00:00Z/)
    expect(response.headers.get('x-should-retry')).toBe('false')
    await noHoldsLeft()
  })

  test('429 usage_limit_exceeded carries Retry-After', async () => {
    const slowKey = await gw.key(accountId, { rpmLimit: 2 })
    for (let i = 0; i < 2; i++)
      expect((await chat({ model: 'test/cheap', messages: hello }, slowKey.key)).status).toBe(200)
    const response = await chat({ model: 'test/cheap', messages: hello }, slowKey.key)
    const retryAfter = Number(response.headers.get('retry-after'))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(70)
    // Left to the SDKs' retries only when they wait that long (rate-refusals.test.ts has both sides).
    expect(response.headers.get('x-should-retry')).toBe(String(retryAfter <= 60))
    expect((await expectError(response, 429, 'usage_limit_exceeded')).message).toContain(
      '2 requests per minute',
    )
  })

  test('429 usage_limit_exceeded for a request estimated above the tokens per minute on its own is not to be retried', async () => {
    const narrow = await gw.key(accountId, { tpmLimit: 1_000 })
    const response = await chat(
      { model: 'test/cheap', messages: hello, max_tokens: 5_000 },
      narrow.key,
    )
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(response.headers.get('x-should-retry')).toBe('false')
    const error = await expectError(response, 429, 'usage_limit_exceeded')
    expect(error.message).toContain('more than the 1000 tokens per minute this key allows')
    expect(error.message).toContain('Lower max_completion_tokens')
    expect(
      (await chat({ model: 'test/cheap', messages: hello, max_tokens: 50 }, narrow.key)).status,
    ).toBe(200)
    await noHoldsLeft()
  })

  describe('upstream failures before any answer release the hold', () => {
    test('503 model_unavailable when the provider fails, with the wait an overloaded provider asked for', async () => {
      const failed = await chat({ model: 'test/fail', messages: hello })
      expect(failed.headers.get('retry-after')).toBeNull()
      await expectError(failed, 503, 'model_unavailable')
      const overloaded = await chat({ model: 'test/overloaded-wait', messages: hello })
      expect(overloaded.headers.get('retry-after')).toBe('4')
      await expectError(overloaded, 503, 'model_unavailable')
      await noHoldsLeft()
    })

    test('503 upstream_rate_limited when the provider rate-limits, with the wait the provider asked for', async () => {
      const limited = await chat({ model: 'test/limited', messages: hello })
      expect(limited.headers.get('retry-after')).toBeNull()
      await expectError(limited, 503, 'upstream_rate_limited')
      const told = await chat({ model: 'test/limited-wait', messages: hello })
      expect(told.headers.get('retry-after')).toBe('7')
      await expectError(told, 503, 'upstream_rate_limited')
    })

    test('400 provider_policy_rejected when the provider refuses the content', async () => {
      await expectError(
        await chat({ model: 'test/policy', messages: hello }),
        400,
        'provider_policy_rejected',
      )
    })

    test('400 invalid_request carries the provider’s reason for a bad parameter', async () => {
      expect(
        (
          await expectError(
            await chat({ model: 'test/bad-param', messages: hello }),
            400,
            'invalid_request',
          )
        ).message,
      ).toContain('fake failure 400')
    })

    test('503 no_available_route when no provider of the model is configured', async () => {
      await expectError(
        await chat({ model: 'test/unkeyed', messages: hello }),
        503,
        'no_available_route',
      )
    })

    test('503 upstream_response_invalid names the failed check', async () => {
      expect(
        (
          await expectError(
            await chat({ model: 'test/garbage', messages: hello }),
            503,
            'upstream_response_invalid',
          )
        ).message,
      ).toContain('not JSON')
      await noHoldsLeft()
    })

    test('504 request_timeout states the number of upstream attempts', async () => {
      const error = await expectError(
        await chat({ model: 'test/slow', messages: hello }),
        504,
        'request_timeout',
      )
      expect(error.message).toContain('1 upstream attempt')
      await noHoldsLeft()
    })
  })

  test('a fallback answers when the first model fails, at its own price', async () => {
    const response = await chat({ model: 'test/fail', models: ['test/cheap'], messages: hello })
    expect(response.status).toBe(200)
    expect(response.headers.get('x-service-model')).toBe('test/cheap')
    expect(response.headers.get('x-service-provider')).toBe('fake')
    const { usage } = (await response.json()) as {
      usage: { prompt_tokens: number; completion_tokens: number; cost: number }
    }
    const costNano = usage.prompt_tokens * 1_000 + usage.completion_tokens * 2_000
    expect(response.headers.get('x-service-cost-usd')).toBe(nanoToUsd(costNano))
    expect(usage.cost).toBe(Number(nanoToUsd(costNano)))
  })

  test('502 upstream_error arrives as an error event when the stream breaks after it began', async () => {
    const response = await chat({ model: 'test/stream-error', messages: hello, stream: true })
    expect(response.status).toBe(200)
    const events = await readEvents(response)
    const last = JSON.parse(events.at(-1)!) as { error: { code: string } }
    expect(last.error.code).toBe('upstream_error')
    expect(events).not.toContain('[DONE]')
    await noHoldsLeft()
  })

  test('a stream whose first bytes carry an error gives its ceiling slot back once', async () => {
    const ceiling = gw.app.gateway.ceiling
    expect(ceiling.inUse).toBe(0)
    for (let i = 0; i < 3; i++) {
      // The role chunk and then the error: nothing reached the client, so it is an HTTP error.
      const response = await chat({ model: 'test/error-first', messages: hello, stream: true })
      expect(response.status).toBe(503)
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
        'model_unavailable',
      )
    }
    expect(ceiling.inUse).toBe(0)
    await noHoldsLeft()
    // The provider's streams are over (cut or ended) before the next test counts them.
    for (let i = 0; i < 100 && gw.upstream.openStreams > 0; i++) await Bun.sleep(10)
    expect(gw.upstream.openStreams).toBe(0)
  })

  test('a stream that goes idle ends with upstream_error and stops the provider', async () => {
    const aborted = gw.upstream.abortedStreams
    const started = performance.now()
    const response = await chat({ model: 'test/stall', messages: hello, stream: true })
    const events = await readEvents(response)
    expect(performance.now() - started).toBeLessThan(2_000)
    const last = JSON.parse(events.at(-1)!) as { error: { code: string; message: string } }
    expect(last.error).toMatchObject({ code: 'upstream_error' })
    expect(last.error.message).toContain('idle')
    await noHoldsLeft()
    // The provider sees the cut a moment after the client's stream ended.
    const until = Date.now() + 2_000
    while (gw.upstream.abortedStreams === aborted && Date.now() < until) await Bun.sleep(20)
    expect(gw.upstream.abortedStreams).toBe(aborted + 1)
  })

  test('a client that leaves while waiting for a non-streaming answer releases its hold', async () => {
    const controller = new AbortController()
    const pending = gw.chat(
      key,
      { model: 'test/slow', messages: hello },
      { signal: controller.signal },
    )
    await Bun.sleep(100)
    expect((await gw.app.gateway.store.snapshot(accountId)).inFlight).toBe(1)
    const abortedAt = performance.now()
    controller.abort()
    await pending.catch(() => undefined)
    // Well before the 400 ms upstream timeout: the hold ended because the client left.
    expect(performance.now() - abortedAt).toBeLessThan(150)
    await noHoldsLeft()
  })
})

describeWith('postgres', 'gateway ceiling', () => {
  test('503 overloaded with Retry-After 5 past the concurrent-request ceiling, before any hold', async () => {
    const gw = await startTestGateway({
      store: 'memory',
      database: 'postgres',
      models,
      env: { MAX_CONCURRENT_REQUESTS: '1', UPSTREAM_TIMEOUT_MS: '5000' },
    })
    try {
      const accountId = await gw.account('1')
      const { key } = await gw.key(accountId)
      const slow = gw.chat(key, { model: 'test/slow', messages: hello })
      await Bun.sleep(100)
      const refused = await gw.chat(key, { model: 'test/cheap', messages: hello })
      expect(refused.headers.get('retry-after')).toBe('5')
      await expectError(refused, 503, 'overloaded')
      expect((await gw.app.gateway.store.snapshot(accountId)).inFlight).toBe(1)
      // Every endpoint that takes a key stands behind the same ceiling.
      const listing = await gw.app.api.handle(
        new Request('http://gateway.test/v1/models', {
          headers: { authorization: `Bearer ${key}` },
        }),
      )
      await expectError(listing, 503, 'overloaded')
      const status = await gw.app.api.handle(
        new Request('http://gateway.test/v1/images/status?request_id=req_x', {
          headers: { authorization: `Bearer ${key}` },
        }),
      )
      await expectError(status, 503, 'overloaded')
      expect((await slow).status).toBe(200)
    } finally {
      await gw.close()
    }
  })
})
