// POST /v1/messages/count_tokens through both majors of the Anthropic SDK: the provider's own count for
// a model routed to a Messages-style provider, the gateway's tokenizer otherwise, never a charge; its
// refusals, and those of any other path under /v1/messages, in the Messages error shape.
import Anthropic from '@anthropic-ai/sdk'
import AnthropicV0 from 'anthropic-sdk-v0'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { loadTokenizer } from '../../../../proxy/core/catalog/tokenizers.ts'
import {
  anthropicTestModel,
  startTestGateway,
  testModel,
  type TestGateway,
} from '../../../helpers/gateway.ts'
import { describeWith, uniqueName } from '../../../helpers/services.ts'

const models = [
  anthropicTestModel('anthropic/counted', 'fake?prompt=123'),
  anthropicTestModel('anthropic/failing', 'fake?status=500'),
  anthropicTestModel('anthropic/refusing', 'fake?status=400'),
  testModel('openai/plain', 'fake'),
  testModel('openai/cl100k', 'fake', { tokenizer: 'cl100k_base' }),
]
const hello: Anthropic.MessageParam[] = [{ role: 'user', content: 'Hello, how are you today?' }]

type MessagesError = InstanceType<typeof Anthropic.APIError> & {
  error: { type: string; error: { type: string; code: string; message: string } }
}
async function refusal(promise: Promise<unknown>): Promise<MessagesError> {
  try {
    await promise
  } catch (caught) {
    return caught as MessagesError
  }
  throw new Error('expected a refusal')
}

describeWith('postgres', 'POST /v1/messages/count_tokens', () => {
  let gw: TestGateway
  let apiUrl: string
  let key: string
  let accountId: string
  let client: Anthropic
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres', models })
    apiUrl = gw.app.listen().apiUrl
    accountId = await gw.account('1')
    key = (await gw.key(accountId)).key
    client = new Anthropic({ baseURL: apiUrl, apiKey: key, maxRetries: 0 })
  })
  afterAll(() => gw.close())

  test('a Messages-style provider counts: only the input is sent, with its key, version and the client’s beta', async () => {
    const { data, response } = await client.beta.messages
      .countTokens({
        model: 'anthropic/counted',
        betas: ['context-1m-2025-08-07'],
        system: 'Be brief.',
        tools: [{ name: 'look', description: 'Look', input_schema: { type: 'object' } }],
        messages: [...hello, { role: 'system', content: 'Use metric.' } as never],
      })
      .withResponse()
    expect(data as unknown).toEqual({ input_tokens: 123 })
    expect(response.headers.get('request-id')).toMatch(/^req_/)
    expect(response.headers.get('x-service-cost-usd')).toBe('0')
    expect(response.headers.get('x-service-balance-usd')).toBe('1')
    expect(response.headers.get('x-service-provider')).toBe('fake-anthropic')
    const sent = gw.upstream.requests.at(-1)!
    expect(sent.path).toBe('/v1/messages/count_tokens')
    expect(sent.body).toEqual({
      model: 'fake?prompt=123',
      system: [
        { type: 'text', text: 'Be brief.' },
        { type: 'text', text: 'Use metric.' },
      ],
      tools: [{ name: 'look', description: 'Look', input_schema: { type: 'object' } }],
      messages: hello,
    })
    expect(sent.headers['x-api-key']).toBe('sk-fake-provider')
    expect(sent.headers['anthropic-version']).toBe('2023-06-01')
    expect(sent.headers['anthropic-beta']).toContain('context-1m-2025-08-07')
    expect(JSON.stringify(sent.headers)).not.toContain(key)
  })

  test('the older SDK major counts too (x-api-key), and fields of a whole request are accepted', async () => {
    const older = new AnthropicV0({ baseURL: apiUrl, apiKey: key, maxRetries: 0 })
    expect(
      await older.messages.countTokens({ model: 'anthropic/counted', messages: hello }),
    ).toEqual({ input_tokens: 123 })
    const response = await fetch(`${apiUrl}/api/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'anthropic/counted',
        max_tokens: 100,
        temperature: 0.5,
        stream: true,
        messages: hello,
      }),
    })
    expect(await response.json()).toEqual({ input_tokens: 123 })
    expect(gw.upstream.requests.at(-1)!.body).toEqual({
      model: 'fake?prompt=123',
      messages: hello,
    })
  })

  test('another provider style: the gateway counts with the model’s tokenizer, and sends nothing', async () => {
    const sent = gw.upstream.requests.length
    const framing = 8 // per message, as holds count it
    const o200k = await loadTokenizer('o200k_base')
    const cl100k = await loadTokenizer('cl100k_base')
    const text = (hello[0]!.content as string) + ' 🦜 ünïcödé'
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: text }]
    expect(await client.messages.countTokens({ model: 'openai/plain', messages })).toEqual({
      input_tokens: framing + o200k(text),
    })
    expect(await client.messages.countTokens({ model: 'openai/cl100k', messages })).toEqual({
      input_tokens: framing + cl100k(text),
    })
    const tools = [{ name: 'look', description: 'Look', input_schema: { type: 'object' as const } }]
    expect(
      await client.messages.countTokens({
        model: 'openai/plain',
        system: 'Be brief.',
        tools,
        messages,
      }),
    ).toEqual({
      input_tokens: framing + o200k(text) + o200k('Be brief.') + o200k(JSON.stringify(tools)),
    })
    expect(gw.upstream.requests.length).toBe(sent)
  })

  test('a provider that cannot count leaves the count to the gateway; one that refuses the request refuses it', async () => {
    const counted = await client.messages.countTokens({
      model: 'anthropic/failing',
      messages: hello,
    })
    expect(counted.input_tokens).toBe(
      8 + (await loadTokenizer('o200k_base'))(hello[0]!.content as string),
    )
    const caught = await refusal(
      client.messages.countTokens({ model: 'anthropic/refusing', messages: hello }),
    )
    expect(caught).toBeInstanceOf(Anthropic.BadRequestError)
    expect(caught.error.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'invalid_request',
    })
  })

  test('nothing is charged: the balance stays whole', async () => {
    await client.messages.countTokens({ model: 'anthropic/counted', messages: hello })
    const snapshot = await gw.app.gateway.store.snapshot(accountId)
    expect(snapshot.balanceNano).toBe(1_000_000_000)
    expect(snapshot.heldNano).toBe(0)
  })

  describe('refusals in the Messages error shape', () => {
    test('the body is checked as a Messages request, without max_tokens', async () => {
      const missing = await refusal(
        client.messages.countTokens({ model: 'anthropic/counted', messages: [] }),
      )
      expect(missing).toBeInstanceOf(Anthropic.BadRequestError)
      expect(missing.error.error).toMatchObject({
        type: 'invalid_request_error',
        code: 'invalid_request',
      })
      expect(missing.message).toContain('messages: must be a non-empty array')
      const extra = await refusal(
        client.messages.countTokens({
          model: 'anthropic/counted',
          messages: hello,
          response_format: {},
        } as never),
      )
      expect(extra.message).toContain('response_format: Extra inputs are not permitted')
      expect(extra.headers?.get('x-service-error-code')).toBe('invalid_request')
      expect(extra.headers?.get('request-id')).toMatch(/^req_/)
    })

    test('a wrong key is 401, an unknown model 404, a model outside the key’s list 403', async () => {
      const stranger = new Anthropic({
        baseURL: apiUrl,
        apiKey: 'svc-live-11111111111111111111111111',
        maxRetries: 0,
      })
      const unauthorized = await refusal(
        stranger.messages.countTokens({ model: 'anthropic/counted', messages: hello }),
      )
      expect(unauthorized).toBeInstanceOf(Anthropic.AuthenticationError)
      expect(unauthorized.error.error).toMatchObject({
        type: 'authentication_error',
        code: 'invalid_api_key',
      })
      const unknown = await refusal(
        client.messages.countTokens({ model: 'nobody/nothing', messages: hello }),
      )
      expect(unknown).toBeInstanceOf(Anthropic.NotFoundError)
      expect(unknown.error.error.code).toBe('unknown_model')
      const narrow = new Anthropic({
        baseURL: apiUrl,
        apiKey: (await gw.key(accountId, { allowedModels: ['openai/plain'] })).key,
        maxRetries: 0,
      })
      const forbidden = await refusal(
        narrow.messages.countTokens({ model: 'anthropic/counted', messages: hello }),
      )
      expect(forbidden).toBeInstanceOf(Anthropic.PermissionDeniedError)
      expect(forbidden.error.error.code).toBe('model_not_allowed')
    })

    test('the key’s guardrail applies: a block refuses and nothing is sent', async () => {
      const guarded = await gw.key(accountId)
      const id = uniqueName('gr_')
      const { sql } = gw.app.gateway
      await sql`INSERT INTO guardrails (id, account_id, name, filters) VALUES (${id}, ${accountId}, ${id}, ${sql.json([{ detector: 'email', action: 'block' }] as never)})`
      await sql`UPDATE api_keys SET guardrail_id = ${id} WHERE id = ${guarded.id}`
      await gw.app.gateway.keys.invalidate({ accountId })
      const sent = gw.upstream.requests.length
      const caught = await refusal(
        new Anthropic({ baseURL: apiUrl, apiKey: guarded.key, maxRetries: 0 }).messages.countTokens(
          {
            model: 'anthropic/counted',
            messages: [{ role: 'user', content: 'write to jane@example.com' }],
          },
        ),
      )
      expect(caught).toBeInstanceOf(Anthropic.PermissionDeniedError)
      expect(caught.error.error.code).toBe('guardrail_blocked')
      expect(gw.upstream.requests.length).toBe(sent)
    })

    test('any other path under /v1/messages is 404 not_found in the Messages shape', async () => {
      for (const [method, path] of [
        ['POST', '/v1/messages/batches'],
        ['GET', '/api/v1/messages/count_tokens'],
        ['GET', '/v1/messages'],
      ] as const) {
        const response = await fetch(`${apiUrl}${path}`, {
          method,
          headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
        })
        expect([path, response.status]).toEqual([path, 404])
        expect(response.headers.get('x-service-error-code')).toBe('not_found')
        expect(response.headers.get('request-id')).toMatch(/^req_/)
        const body = (await response.json()) as { type: string; error: Record<string, unknown> }
        expect(body).toMatchObject({
          type: 'error',
          error: { type: 'not_found_error', code: 'not_found' },
        })
        expect(body.error.message).toContain(path)
      }
    })
  })
})
