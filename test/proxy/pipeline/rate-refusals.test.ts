// A key's requests-per-minute refusal as the official SDKs see it, in each client style: the style's
// RateLimitError with `usage_limit_exceeded` in the body and in x-service-error-code, the key's limit in
// the message, nothing charged, and a Retry-After naming the first moment the request fits. A wait longer
// than the SDKs sit through (a rate limit's reaches 62 s: its oldest two-second bucket leaving the view)
// carries x-should-retry false, so the SDK hands the refusal to the caller at once instead of retrying it
// after its own second of backoff (the OpenAI SDK) or sleeping through it twice (the Anthropic SDK).
// The in-process store reads the clock this test sets, so where the bucket boundaries fall is fixed.
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, expect, setSystemTime, test } from 'bun:test'
import OpenAI from 'openai'
import {
  anthropicTestModel,
  startTestGateway,
  testModel,
  type TestGateway,
} from '../../helpers/gateway.ts'
import { describeWith } from '../../helpers/services.ts'

const hello = [{ role: 'user' as const, content: 'hello' }]

describeWith('postgres', 'rate limit refusals through the SDKs', () => {
  let gw: TestGateway
  let apiUrl: string
  let accountId: string
  beforeAll(async () => {
    gw = await startTestGateway({
      store: 'memory',
      database: 'postgres',
      models: [testModel('test/cheap', 'fake'), anthropicTestModel('test/claude', 'fake')],
    })
    apiUrl = gw.app.listen().apiUrl
    accountId = await gw.account('10')
  })
  afterAll(async () => {
    setSystemTime()
    await gw?.close()
  })

  /** The SDKs of one key, with their default retries, counting the HTTP requests they send. */
  const clients = (key: string) => {
    const sent = { count: 0 }
    const fetch = (url: string | URL | Request, init?: RequestInit) => {
      sent.count += 1
      return globalThis.fetch(url, init)
    }
    return {
      sent,
      openai: new OpenAI({ baseURL: `${apiUrl}/v1`, apiKey: key, fetch }),
      anthropic: new Anthropic({ baseURL: apiUrl, apiKey: key, fetch }),
    }
  }
  const calls = (sdk: ReturnType<typeof clients>) => ({
    chat: () =>
      sdk.openai.chat.completions.create({ model: 'test/cheap', messages: hello, max_tokens: 10 }),
    responses: () =>
      sdk.openai.responses.create({ model: 'test/cheap', input: 'hello', max_output_tokens: 16 }),
    messages: () =>
      sdk.anthropic.messages.create({ model: 'test/claude', messages: hello, max_tokens: 10 }),
  })
  const refusal = async (call: Promise<unknown>) => {
    const error = await call.then(
      () => undefined,
      (caught: unknown) => caught,
    )
    if (!(error instanceof OpenAI.RateLimitError || error instanceof Anthropic.RateLimitError))
      throw new Error(`expected a RateLimitError, got ${error}`)
    return error
  }

  test('past the key’s requests per minute: each style’s 429, a wait past a minute left to the caller, and the request fits on time', async () => {
    const key = (await gw.key(accountId, { rpmLimit: 3 })).key
    const sdk = clients(key)
    const style = calls(sdk)
    // 100 ms into a two-second bucket: the three admissions leave the view 62 s after its start.
    const start = (Math.floor(Date.now() / 2_000) + 1) * 2_000
    setSystemTime(new Date(start + 100))
    await style.chat()
    await style.responses()
    await style.messages()

    for (const [name, call] of Object.entries(style)) {
      sdk.sent.count = 0
      const error = await refusal(call())
      expect({ name, sent: sdk.sent.count, status: error.status }).toEqual({
        name,
        sent: 1,
        status: 429,
      })
      const body = (
        error instanceof Anthropic.RateLimitError
          ? (error.error as { error: Record<string, string> }).error
          : error.error
      ) as Record<string, string>
      expect(body).toMatchObject({ type: 'rate_limit_error', code: 'usage_limit_exceeded' })
      expect(body.message).toContain('this key allows 3 requests per minute')
      expect(error.headers.get('x-service-error-code')).toBe('usage_limit_exceeded')
      expect(error.headers.get('x-service-cost-usd')).toBe('0')
      expect(error.headers.get('retry-after')).toBe('62')
      expect(error.headers.get('x-should-retry')).toBe('false')
    }

    // 15 s later the wait is 47 s, within what the SDKs sit through: left to their retries.
    setSystemTime(new Date(start + 15_000))
    const withinMinute = await refusal(
      new OpenAI({ baseURL: `${apiUrl}/v1`, apiKey: key, maxRetries: 0 }).chat.completions.create({
        model: 'test/cheap',
        messages: hello,
      }),
    )
    expect(withinMinute.headers.get('retry-after')).toBe('47')
    expect(withinMinute.headers.get('x-should-retry')).toBe('true')

    // A second early it is refused; on time it is admitted.
    setSystemTime(new Date(start + 61_000))
    expect((await refusal(style.messages())).headers.get('retry-after')).toBe('1')
    setSystemTime(new Date(start + 62_000))
    const { response } = await style.chat().withResponse()
    expect(response.status).toBe(200)
  })
})
