// The three client styles end to end: their error shapes, what the provider receives, fallbacks across
// provider styles, stored responses, and the model catalog.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import {
  anthropicTestModel,
  startTestGateway,
  testModel,
  type TestGateway,
} from '../../../helpers/gateway.ts'
import { describeWith } from '../../../helpers/services.ts'

const models = [
  testModel('openai/plain', 'fake'),
  testModel('openai/failing', 'fake?status=500'),
  anthropicTestModel('anthropic/plain', 'fake'),
]
const hello = [{ role: 'user', content: 'hi' }]

describeWith('postgres', 'client styles', () => {
  let gw: TestGateway
  let key: string
  let accountId: string
  const post = (path: string, body: unknown, headers: Record<string, string> = {}, as = key) =>
    gw.app.api.handle(
      new Request(`http://gateway.test/v1/${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${as}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      }),
    )
  beforeAll(async () => {
    gw = await startTestGateway({
      store: 'memory',
      database: 'postgres',
      models,
      env: { CATALOG_READS_PER_MINUTE: '3' },
    })
    accountId = await gw.account('5')
    key = (await gw.key(accountId)).key
  })
  afterAll(() => gw.close())

  test("an output limit above the model's maximum reaches the provider as that maximum, passed through or translated", async () => {
    const cases = [
      ['chat/completions', 'openai/plain', 'max_completion_tokens'],
      ['chat/completions', 'anthropic/plain', 'max_tokens'],
      ['messages', 'anthropic/plain', 'max_tokens'],
      ['messages', 'openai/plain', 'max_completion_tokens'],
    ] as const
    for (const [path, model, field] of cases) {
      const limit = path === 'messages' ? 'max_tokens' : 'max_completion_tokens'
      const response = await post(
        path,
        { model, messages: hello, [limit]: 50_000 },
        path === 'messages' ? { 'anthropic-version': '2023-06-01' } : {},
      )
      expect(response.status).toBe(200)
      const sent = gw.upstream.requests.at(-1)!.body
      expect([path, model, sent[field]]).toEqual([path, model, 1_000])
    }
  })

  test("a preset's sampling reaches a Messages-style provider as the style takes it: one of temperature and top_p, temperature at most 1", async () => {
    const account = await gw.account('1')
    const own = (await gw.key(account)).key
    await gw.app.gateway.sql`
      INSERT INTO presets (account_id, slug, model, fallbacks, params)
      VALUES (${account}, 'warm', 'anthropic/plain', '{}', ${gw.app.gateway.sql.json({ temperature: 1.5, top_p: 0.9 })})`
    await gw.app.gateway.keys.invalidate({ accountId: account })
    const sent = async (fields: Record<string, unknown>) => {
      const response = await post(
        'messages',
        { model: '@preset/warm', max_tokens: 20, messages: hello, ...fields },
        { 'anthropic-version': '2023-06-01' },
        own,
      )
      expect(response.status).toBe(200)
      const body = gw.upstream.requests.at(-1)!.body
      return { temperature: body.temperature, top_p: body.top_p }
    }
    expect(await sent({})).toEqual({ temperature: 1, top_p: undefined })
    expect(await sent({ top_p: 0.5 })).toEqual({ temperature: undefined, top_p: 0.5 })
    expect(await sent({ temperature: 0.2 })).toEqual({ temperature: 0.2, top_p: undefined })
  })

  test("a preset's sampling leaves a Messages request with thinking on as sent, as the style's providers refuse sampling with thinking", async () => {
    const account = await gw.account('1')
    const own = (await gw.key(account)).key
    await gw.app.gateway.sql`
      INSERT INTO presets (account_id, slug, model, fallbacks, params)
      VALUES (${account}, 'careful', 'anthropic/plain', '{}', ${gw.app.gateway.sql.json({ temperature: 0.3, top_p: 0.5, stop: ['###'] })})`
    await gw.app.gateway.keys.invalidate({ accountId: account })
    const sent = async (thinking: Record<string, unknown>) => {
      const response = await post(
        'messages',
        { model: '@preset/careful', max_tokens: 4000, messages: hello, thinking },
        { 'anthropic-version': '2023-06-01' },
        own,
      )
      expect(response.status).toBe(200)
      const body = gw.upstream.requests.at(-1)!.body
      return { temperature: body.temperature, top_p: body.top_p, stop: body.stop_sequences }
    }
    expect(await sent({ type: 'enabled', budget_tokens: 2000 })).toEqual({
      temperature: undefined,
      top_p: undefined,
      stop: ['###'],
    })
    expect(await sent({ type: 'disabled' })).toEqual({
      temperature: 0.3,
      top_p: undefined,
      stop: ['###'],
    })
  })

  describe('Messages style', () => {
    test('refusals use the Messages error shape with the code, request-id and the balance', async () => {
      const poor = await gw.account('0.000001')
      const response = await post(
        'messages',
        { model: 'anthropic/plain', max_tokens: 100, messages: hello },
        {},
        (await gw.key(poor)).key,
      )
      expect(response.status).toBe(402)
      expect(response.headers.get('x-service-error-code')).toBe('insufficient_credits')
      expect(response.headers.get('x-service-balance-usd')).toBe('0.000001')
      expect(response.headers.get('request-id')).toMatch(/^req_/)
      const body = (await response.json()) as {
        type: string
        error: { type: string; code: string; message: string }
        request_id: string
      }
      expect(body).toMatchObject({
        type: 'error',
        error: { type: 'billing_error', code: 'insufficient_credits' },
      })
      expect(body.error.message).toContain('or lower max_tokens.')
      expect(body.request_id).toBe(response.headers.get('request-id')!)
    })

    test('max_tokens is required, and messages must be a non-empty array', async () => {
      const missing = await post('messages', { model: 'anthropic/plain', messages: hello })
      expect(((await missing.json()) as { error: { message: string } }).error.message).toBe(
        'max_tokens: is required',
      )
      const empty = await post('messages', {
        model: 'anthropic/plain',
        max_tokens: 10,
        messages: [],
      })
      expect(empty.status).toBe(400)
    })

    test('the provider of the same style gets the body as sent, with its model name, its own key and version, without fallbacks', async () => {
      const response = await post(
        'messages',
        {
          model: 'anthropic/plain',
          max_tokens: 100,
          messages: hello,
          fallbacks: ['openai/plain'],
          top_k: 3,
          thinking: { type: 'disabled' },
        },
        { 'anthropic-version': '2026-10-21', 'anthropic-beta': 'x' },
      )
      expect(response.status).toBe(200)
      const sent = gw.upstream.requests.at(-1)!
      expect(sent.path).toBe('/v1/messages')
      expect(sent.body).toEqual({
        model: 'fake',
        max_tokens: 100,
        messages: hello,
        top_k: 3,
        thinking: { type: 'disabled' },
      })
      expect(sent.headers['anthropic-version']).toBe('2023-06-01')
      expect(sent.headers['x-api-key']).toBe('sk-fake-provider')
      expect(sent.headers.authorization).toBeUndefined()
    })

    test('system-role messages move to the top-level system for the provider', async () => {
      const messages = [{ role: 'system', content: 'Use metric.' }, ...hello]
      expect(
        (
          await post('messages', {
            model: 'anthropic/plain',
            max_tokens: 10,
            system: 'Be brief.',
            messages,
          })
        ).status,
      ).toBe(200)
      expect(gw.upstream.requests.at(-1)!.body).toMatchObject({
        system: [
          { type: 'text', text: 'Be brief.' },
          { type: 'text', text: 'Use metric.' },
        ],
        messages: hello,
      })
    })
  })

  describe('fallbacks across provider styles', () => {
    test('a Chat client falls back from a failing OpenAI-style route to an Anthropic-style model, translated', async () => {
      const response = await post('chat/completions', {
        model: 'openai/failing',
        models: ['anthropic/plain'],
        messages: hello,
        max_tokens: 20,
      })
      expect(response.status).toBe(200)
      expect(response.headers.get('x-service-model')).toBe('anthropic/plain')
      const body = (await response.json()) as {
        object: string
        choices: { message: { content: string } }[]
      }
      expect(body.object).toBe('chat.completion')
      expect(body.choices[0]!.message.content).toBe('w0 w1 w2 w3 w4 ')
      expect(gw.upstream.requests.at(-1)!.body).toMatchObject({
        model: 'fake',
        max_tokens: 20,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      })
    })

    test('what the serving provider cannot receive is refused, not dropped', async () => {
      const response = await post('chat/completions', {
        model: 'anthropic/plain',
        messages: hello,
        n: 2,
      })
      expect(response.status).toBe(400)
      expect(((await response.json()) as { error: { param: string } }).error.param).toBe('n')
    })
  })

  describe('images across styles', () => {
    const png =
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='
    test('a Chat image part reaches a Messages-style provider as a base64 source', async () => {
      const content = [
        { type: 'text', text: 'What is this?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${png}`, detail: 'low' } },
      ]
      expect(
        (
          await post('chat/completions', {
            model: 'anthropic/plain',
            messages: [{ role: 'user', content }],
          })
        ).status,
      ).toBe(200)
      expect(gw.upstream.requests.at(-1)!.body.messages).toEqual([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
          ],
        },
      ])
    })
    test('a Messages image block reaches an OpenAI-style provider as a data URL', async () => {
      const content = [
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
        { type: 'text', text: 'What is this?' },
      ]
      expect(
        (
          await post('messages', {
            model: 'openai/plain',
            max_tokens: 10,
            messages: [{ role: 'user', content }],
          })
        ).status,
      ).toBe(200)
      expect(gw.upstream.requests.at(-1)!.body.messages).toEqual([
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
            { type: 'text', text: 'What is this?' },
          ],
        },
      ])
    })
  })

  test('a Responses-style refusal for the balance names the field the style limits output with', async () => {
    const poor = await gw.account('0.000001')
    const response = await post(
      'responses',
      { model: 'openai/plain', input: 'hi' },
      {},
      (await gw.key(poor)).key,
    )
    expect(response.status).toBe(402)
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain(
      'or lower max_output_tokens.',
    )
  })

  describe('stored responses', () => {
    test('store: false keeps nothing, so a follow-up names previous_response_id', async () => {
      const first = (await (
        await post('responses', { model: 'openai/plain', input: 'hi', store: false })
      ).json()) as { id: string }
      const follow = await post('responses', {
        model: 'openai/plain',
        input: 'more',
        previous_response_id: first.id,
      })
      expect(follow.status).toBe(400)
      expect(((await follow.json()) as { error: { param: string } }).error.param).toBe(
        'previous_response_id',
      )
    })

    test('a stored response belongs to its account: others can neither follow up nor read it; deletion ends it', async () => {
      const first = (await (
        await post('responses', { model: 'anthropic/plain', input: 'hi' })
      ).json()) as { id: string }
      const otherKey = (await gw.key(await gw.account('1'))).key
      expect(
        (
          await post(
            'responses',
            { model: 'openai/plain', input: 'more', previous_response_id: first.id },
            {},
            otherKey,
          )
        ).status,
      ).toBe(400)
      const read = (as: string) =>
        gw.app.api.handle(
          new Request(`http://gateway.test/v1/responses/${first.id}`, {
            headers: { authorization: `Bearer ${as}` },
          }),
        )
      expect((await read(otherKey)).status).toBe(404)
      expect(((await (await read(key)).json()) as { id: string }).id).toBe(first.id)
      const removed = await gw.app.api.handle(
        new Request(`http://gateway.test/v1/responses/${first.id}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${key}` },
        }),
      )
      expect(await removed.json()).toEqual({ id: first.id, object: 'response', deleted: true })
      expect((await read(key)).status).toBe(404)
      expect(
        (
          await post('responses', {
            model: 'openai/plain',
            input: 'more',
            previous_response_id: first.id,
          })
        ).status,
      ).toBe(400)
    })

    test('the hold of a follow-up covers the stored turns', async () => {
      const first = (await (
        await post('responses', { model: 'openai/plain', input: 'x'.repeat(20_000) })
      ).json()) as { id: string }
      // A key of the same account whose daily cap (0.001 USD) fits a short request, not 20,000 bytes more.
      const capped = (await gw.key(accountId, { dailyLimitNano: 1_000_000 })).key
      const alone = await post(
        'responses',
        { model: 'openai/plain', input: 'more', max_output_tokens: 16 },
        {},
        capped,
      )
      expect(alone.status).toBe(200)
      const follow = await post(
        'responses',
        {
          model: 'openai/plain',
          input: 'more',
          max_output_tokens: 16,
          previous_response_id: first.id,
        },
        {},
        capped,
      )
      expect(follow.status).toBe(403)
      expect(follow.headers.get('x-service-error-code')).toBe('spend_limit_exceeded')
    })
  })

  describe('model catalog', () => {
    test('GET /v1/models needs a key and lists every model with limits, prices and styles', async () => {
      const anonymous = await gw.app.api.handle(new Request('http://gateway.test/v1/models'))
      expect(anonymous.status).toBe(401)
      const listing = (await (
        await gw.app.api.handle(
          new Request('http://gateway.test/v1/models', {
            headers: { authorization: `Bearer ${key}` },
          }),
        )
      ).json()) as {
        object: string
        data: Record<string, unknown>[]
        has_more: boolean
      }
      expect(listing.object).toBe('list')
      expect(listing.has_more).toBe(false)
      expect(listing.data.map((model) => model.id)).toEqual(models.map((model) => model.id))
      expect(listing.data[0]).toMatchObject({
        object: 'model',
        type: 'model',
        owned_by: 'openai',
        context_length: 100_000,
        max_output_tokens: 1_000,
        pricing: {
          unit: 'usd_per_million_tokens',
          input: '1',
          output: '2',
          cached_input: '1',
          cache_write: '1',
        },
        styles: ['chat', 'messages', 'responses'],
      })
    })

    test('the site catalog is public and limited per address, with Retry-After', async () => {
      const { siteUrl } = gw.app.listen()
      const statuses: number[] = []
      let retryAfter: string | null = null
      for (let i = 0; i < 5; i++) {
        const response = await fetch(`${siteUrl}/api/v1/models`)
        statuses.push(response.status)
        if (response.status === 429) {
          retryAfter = response.headers.get('retry-after')
          expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
            'usage_limit_exceeded',
          )
        } else await response.arrayBuffer()
      }
      expect(statuses).toEqual([200, 200, 200, 429, 429])
      expect(Number(retryAfter)).toBeGreaterThan(0)
    })
  })
})
