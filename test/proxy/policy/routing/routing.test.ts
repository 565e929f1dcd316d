// Model choice end to end: fallbacks before and after the first byte, routes and provider preferences,
// presets, automatic choice, Auto Free, aliases, access, breakers and pauses, on the real stores.
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import type { ErrorCode } from '../../../../shared/errors.ts'
import {
  readEvents,
  startTestGateway,
  testModel,
  type TestGateway,
} from '../../../helpers/gateway.ts'
import { holdsEnded, settledAccount } from '../../../helpers/ledger.ts'
import { describeWith, uniqueName } from '../../../helpers/services.ts'

const pricey = { inputPerMTok: 10, outputPerMTok: 20 }
const free = { inputPerMTok: 0, outputPerMTok: 0 }
const models = [
  testModel('test/cheap', 'cheap'),
  testModel('test/pricey', 'pricey', { pricing: pricey }),
  testModel('test/fail', 'fail?status=500', { pricing: pricey }),
  testModel('test/limited', 'limited?status=429'),
  testModel('test/rejects', 'rejects?status=400'),
  testModel('test/breaks', 'breaks?break=3&tokens=20'),
  testModel('test/slow-start', 'slow?delay=1500'),
  testModel('test/two-routes', 'unused', {
    routes: [
      { provider: 'fake', model: 'route-a?status=503' },
      { provider: 'fake-b', model: 'route-b' },
    ],
  }),
  testModel('test/garbage-first', 'unused', {
    routes: [
      { provider: 'fake', model: 'route-a?garbage=1' },
      { provider: 'fake-b', model: 'route-b' },
    ],
  }),
  testModel('test/notools', 'notools', { capabilities: { tools: false } }),
  testModel('test/small', 'small', { contextLength: 1_000, maxOutputTokens: 100 }),
  testModel('test/free-a', 'free-a', { pricing: free, free: true }),
  testModel('test/free-b', 'free-b', { pricing: free, free: true, capabilities: { tools: false } }),
  testModel('test/free-fail', 'free-fail?status=500', { pricing: free, free: true }),
  testModel('test/free-limited', 'free-limited?status=429', { pricing: free, free: true }),
  testModel('test/down-a', 'down-a?status=500'),
  testModel('test/down-b', 'down-b?status=503'),
  testModel('test/unkeyed', 'unkeyed', { routes: [{ provider: 'unkeyed', model: 'unkeyed' }] }),
]
const catalog = {
  aliases: [
    { id: 'test/latest', target: 'test/cheap' },
    { id: 'test/dangling', target: 'test/retired' },
  ],
  auto: [
    { id: 'service/auto', candidates: ['test/pricey', 'test/cheap'] },
    { id: 'service/auto:code', candidates: ['test/notools', 'test/cheap'] },
    { id: 'service/auto:free', free: true, candidates: ['test/free-a', 'test/free-b'] },
    { id: 'service/auto:free-broken', free: true, candidates: ['test/free-fail'] },
    { id: 'service/auto:free-limited', free: true, candidates: ['test/free-limited'] },
    { id: 'service/auto:broken', candidates: ['test/down-a', 'test/down-b'] },
  ],
}
const paidUpstreams = new Set([
  'cheap',
  'pricey',
  'fail',
  'limited',
  'rejects',
  'breaks',
  'slow',
  'route-a',
  'route-b',
  'notools',
  'small',
  'down-a',
  'down-b',
])
const hello = [{ role: 'user', content: 'hello' }]
const weatherTool = [
  {
    type: 'function',
    function: { name: 'weather', parameters: { type: 'object', properties: {} } },
  },
]

type ErrorBody = { error: { code: string; message: string; param?: string | null } }

async function expectError(
  response: Response,
  status: number,
  code: ErrorCode,
): Promise<ErrorBody['error']> {
  const body = (await response.json()) as ErrorBody
  expect({
    status: response.status,
    code: body.error.code,
    header: response.headers.get('x-service-error-code'),
  }).toEqual({ status, code, header: code })
  return body.error
}

describeWith(['postgres', 'redis'], 'routing', () => {
  let gw: TestGateway
  let accountId: string
  let key: string
  beforeAll(async () => {
    gw = await startTestGateway({
      store: 'redis',
      database: 'postgres',
      models,
      catalog,
      env: {
        UPSTREAM_ATTEMPT_FIRST_BYTE_MS: '300',
        FREE_REQUESTS_PER_DAY: '3',
        BREAKER_FAILURES: '3',
        BREAKER_OPEN_MS: '60000',
      },
    })
    accountId = await gw.account('10')
    key = (await gw.key(accountId)).key
  })
  afterAll(() => gw.close())

  const chat = (body: Record<string, unknown>, as = key) =>
    gw.chat(as, { messages: hello, ...body })
  /** Upstream model names requested from now on. */
  const upstreamCalls = () => {
    const from = gw.upstream.requests.length
    return () =>
      gw.upstream.requests.slice(from).map((request) => String(request.body.model).split('?')[0]!)
  }
  const served = (response: Response) => ({
    model: response.headers.get('x-service-model'),
    provider: response.headers.get('x-service-provider'),
  })

  describe('fallbacks', () => {
    test('the next model answers when one fails before starting, charged at its own price', async () => {
      const account = await gw.account('10')
      const own = (await gw.key(account)).key
      const calls = upstreamCalls()
      const response = await chat(
        { model: 'test/fail', models: ['test/limited', 'test/cheap'], max_tokens: 50 },
        own,
      )
      expect(response.status).toBe(200)
      expect(served(response)).toEqual({ model: 'test/cheap', provider: 'fake' })
      expect(calls()).toEqual(['fail', 'limited', 'cheap'])
      const body = (await response.json()) as {
        usage: { prompt_tokens: number; completion_tokens: number; cost: number }
      }
      // test/cheap: 1,000 nano per input token and 2,000 per output token.
      const expected = body.usage.prompt_tokens * 1_000 + body.usage.completion_tokens * 2_000
      const { ledger } = await settledAccount(gw, account)
      expect(ledger.filter((row) => row.kind === 'charge').map((row) => -row.amount_nano)).toEqual([
        expected,
      ])
    })

    test('a request the provider rejects does not fall back', async () => {
      const calls = upstreamCalls()
      await expectError(
        await chat({ model: 'test/rejects', models: ['test/cheap'] }),
        400,
        'invalid_request',
      )
      expect(calls()).toEqual(['rejects'])
    })

    test('a stream that fails after its first byte is 502 upstream_error, with no fallback', async () => {
      const calls = upstreamCalls()
      const response = await chat({ model: 'test/breaks', models: ['test/cheap'], stream: true })
      expect(response.status).toBe(200)
      const events = await readEvents(response)
      const failure = events
        .map((event) => (event.startsWith('{') ? (JSON.parse(event) as Partial<ErrorBody>) : {}))
        .find((event) => event.error)
      expect(failure?.error?.code).toBe('upstream_error')
      expect(calls()).toEqual(['breaks'])
      await holdsEnded(gw, accountId)
    })

    test('a stream that does not start within the attempt time gives way to the next model', async () => {
      const calls = upstreamCalls()
      const response = await chat({
        model: 'test/slow-start',
        models: ['test/cheap'],
        stream: true,
      })
      expect(served(response).model).toBe('test/cheap')
      expect((await readEvents(response)).at(-1)).toBe('[DONE]')
      expect(calls()).toEqual(['slow', 'cheap'])
    })

    test('the hold covers the most expensive candidate', async () => {
      const account = await gw.account('0.015')
      const own = (await gw.key(account)).key
      // 1,000 output tokens: $0.02 on test/pricey, more than the balance; $0.002 on test/cheap alone.
      await expectError(
        await chat({ model: 'test/cheap', models: ['test/pricey'], max_tokens: 1_000 }, own),
        402,
        'insufficient_credits',
      )
      const response = await chat({ model: 'test/cheap', max_tokens: 1_000 }, own)
      expect(response.status).toBe(200)
    })

    test('more than three fallbacks are refused', async () => {
      const error = await expectError(
        await chat({ model: 'test/cheap', models: ['test/a', 'test/b', 'test/c', 'test/d'] }),
        400,
        'invalid_request',
      )
      expect(error.param).toBe('models')
    })

    test('Messages-style fallbacks work the same way', async () => {
      const response = await gw.app.api.handle(
        new Request('http://gateway.test/v1/messages', {
          method: 'POST',
          headers: {
            'x-api-key': key,
            'content-type': 'application/json',
            'anthropic-version': '2023-06-01',
          },
          body: JSON.stringify({
            model: 'test/fail',
            fallbacks: ['test/cheap'],
            max_tokens: 20,
            messages: hello,
          }),
        }),
      )
      expect(response.status).toBe(200)
      expect(served(response).model).toBe('test/cheap')
    })
  })

  describe('routes and provider preferences', () => {
    test("a failing route gives way to the model's next route", async () => {
      const response = await chat({ model: 'test/two-routes' })
      expect(served(response)).toEqual({ model: 'test/two-routes', provider: 'fake-b' })
    })

    test('a stream asked for and a page answered: nothing reached the client, so the next route serves', async () => {
      const response = await chat({ model: 'test/garbage-first', stream: true })
      expect(served(response)).toEqual({ model: 'test/garbage-first', provider: 'fake-b' })
      expect(await response.text()).toContain('data: [DONE]')
    })

    test('order, only and ignore choose among routes', async () => {
      const calls = upstreamCalls()
      expect(
        served(await chat({ model: 'test/two-routes', provider: { order: ['fake-b', 'fake'] } }))
          .provider,
      ).toBe('fake-b')
      expect(
        served(await chat({ model: 'test/two-routes', provider: { only: ['fake-b'] } })).provider,
      ).toBe('fake-b')
      expect(
        served(await chat({ model: 'test/two-routes', provider: { ignore: ['fake'] } })).provider,
      ).toBe('fake-b')
      expect(calls()).toEqual(['route-b', 'route-b', 'route-b'])
    })

    test('allow_fallbacks: false keeps to the providers in order', async () => {
      const calls = upstreamCalls()
      await expectError(
        await chat({
          model: 'test/two-routes',
          provider: { order: ['fake'], allow_fallbacks: false },
        }),
        503,
        'model_unavailable',
      )
      expect(calls()).toEqual(['route-a'])
    })

    test('unknown fields and providers are refused by name', async () => {
      expect(
        (
          await expectError(
            await chat({ model: 'test/cheap', provider: { sort: 'price' } }),
            400,
            'invalid_request',
          )
        ).param,
      ).toBe('provider.sort')
      expect(
        (
          await expectError(
            await chat({ model: 'test/cheap', provider: { only: ['nope'] } }),
            400,
            'invalid_request',
          )
        ).param,
      ).toBe('provider.only[0]')
    })

    test('preferences that leave no route: 503 no_available_route; a provider without its key says so', async () => {
      const restricted = await expectError(
        await chat({ model: 'test/cheap', provider: { only: ['fake-b'] } }),
        503,
        'no_available_route',
      )
      expect(restricted.message).toContain('Review the model and provider restrictions')
      const unkeyed = await expectError(
        await chat({ model: 'test/unkeyed' }),
        503,
        'no_available_route',
      )
      expect(unkeyed.message).toContain(
        "No provider of test/unkeyed is set up on this gateway (its provider's API key is not configured)",
      )
      expect(unkeyed.message).not.toContain('restrictions')
    })

    test("the account's provider restrictions apply to every key", async () => {
      const account = await gw.account('1')
      const own = (await gw.key(account)).key
      await gw.app.gateway
        .sql`UPDATE accounts SET allowed_providers = ${['fake-b']} WHERE id = ${account}`
      await gw.app.gateway.keys.invalidate({ accountId: account })
      await expectError(await chat({ model: 'test/cheap' }, own), 503, 'no_available_route')
      expect(served(await chat({ model: 'test/two-routes' }, own)).provider).toBe('fake-b')
    })
  })

  describe('access', () => {
    test('the key, its guardrail and the account each restrict models; the refusal suggests an allowed one', async () => {
      const account = await gw.account('1')
      const own = await gw.key(account, {
        allowedModels: ['test/cheap', 'test/limited', 'test/pricey'],
      })
      let error = await expectError(
        await chat({ model: 'test/two-routes' }, own.key),
        403,
        'model_not_allowed',
      )
      expect(error.message).toContain('test/cheap')
      const guardrail = uniqueName('gr_')
      await gw.app.gateway
        .sql`INSERT INTO guardrails (id, account_id, name, allowed_models) VALUES (${guardrail}, ${account}, 'g', ${['test/pricey']})`
      await gw.app.gateway.sql`UPDATE api_keys SET guardrail_id = ${guardrail} WHERE id = ${own.id}`
      await gw.app.gateway.keys.invalidate({ accountId: account })
      error = await expectError(
        await chat({ model: 'test/cheap' }, own.key),
        403,
        'model_not_allowed',
      )
      expect(error.message).toContain('guardrail')
      expect(error.message).toContain('test/pricey')
      expect((await chat({ model: 'test/pricey' }, own.key)).status).toBe(200)
      await gw.app.gateway
        .sql`UPDATE accounts SET allowed_models = ${['test/cheap']} WHERE id = ${account}`
      await gw.app.gateway.keys.invalidate({ accountId: account })
      error = await expectError(
        await chat({ model: 'test/pricey' }, own.key),
        403,
        'model_not_allowed',
      )
      expect(error.message).toContain('No catalog model is allowed')
      expect(await holdsEnded(gw, account)).toMatchObject({ heldNano: 0, inFlight: 0 })
    })

    test('the model a refusal suggests is one the account can be served: a provider it allows, set up on this gateway', async () => {
      const account = await gw.account('1')
      const own = (await gw.key(account)).key
      // test/cheap comes first in the catalog, but only through `fake`, which the account excludes;
      // test/unkeyed's provider has no key on this gateway.
      await gw.app.gateway.sql`
        UPDATE accounts SET allowed_models = ${['test/cheap', 'test/unkeyed', 'test/two-routes']},
          allowed_providers = ${['fake-b', 'unkeyed']} WHERE id = ${account}`
      await gw.app.gateway.keys.invalidate({ accountId: account })
      const openai = new OpenAI({
        baseURL: 'http://gateway.test/v1',
        apiKey: own,
        maxRetries: 0,
        fetch: (url, init) => gw.app.api.handle(new Request(url, init)),
      })
      const refused = (await openai.chat.completions
        .create({ model: 'test/pricey', messages: [{ role: 'user', content: 'hi' }] })
        .catch((error: unknown) => error)) as InstanceType<typeof OpenAI.APIError>
      expect(refused.status).toBe(403)
      expect(refused.code).toBe('model_not_allowed')
      expect(refused.message).toContain('This key may call, for example, test/two-routes.')
      const followed = await openai.chat.completions
        .create({ model: 'test/two-routes', messages: [{ role: 'user', content: 'hi' }] })
        .withResponse()
      expect(followed.response.headers.get('x-service-provider')).toBe('fake-b')
    })

    test('a fallback outside the allowlist is refused, naming it', async () => {
      const account = await gw.account('1')
      const own = await gw.key(account, { allowedModels: ['test/cheap'] })
      expect(
        (
          await expectError(
            await chat({ model: 'test/cheap', models: ['test/pricey'] }, own.key),
            403,
            'model_not_allowed',
          )
        ).param,
      ).toBe('models[0]')
    })

    test('a refused fallback is named by its place in the Messages style too, which has no param', async () => {
      const account = await gw.account('1')
      const own = await gw.key(account, { allowedModels: ['test/cheap'] })
      const anthropic = new Anthropic({
        baseURL: 'http://gateway.test',
        apiKey: own.key,
        maxRetries: 0,
        fetch: (url: string | URL | Request, init?: RequestInit) =>
          gw.app.api.handle(new Request(url, init)),
      })
      const refusal = async (fallbacks: string[]) => {
        const error = (await anthropic.messages
          .create({
            model: 'test/cheap',
            max_tokens: 10,
            messages: [{ role: 'user', content: 'hi' }],
            fallbacks,
          } as Anthropic.MessageCreateParamsNonStreaming)
          .then(
            () => undefined,
            (failure: unknown) => failure,
          )) as { status: number; error: { error: { code: string; message: string } } }
        return { status: error.status, ...error.error.error }
      }
      expect(await refusal(['test/pricey'])).toMatchObject({
        status: 403,
        code: 'model_not_allowed',
        message: expect.stringMatching(/^fallbacks\[0\]: test\/pricey is not allowed/),
      })
      expect(await refusal(['test/cheap', 'test/nope'])).toMatchObject({
        status: 404,
        code: 'unknown_model',
        message: expect.stringMatching(/^fallbacks\[1\]: Unknown model: test\/nope\./),
      })
      expect(await refusal(['test/dangling'])).toMatchObject({
        status: 503,
        code: 'model_alias_unavailable',
        message: expect.stringMatching(/^fallbacks\[0\]: test\/dangling /),
      })
    })
  })

  describe('presets', () => {
    test('@preset/slug resolves to the saved model, fallbacks and default parameters', async () => {
      const account = await gw.account('1')
      const own = (await gw.key(account)).key
      await gw.app.gateway.sql`
        INSERT INTO presets (account_id, slug, model, fallbacks, params)
        VALUES (${account}, 'writer', 'test/fail', ${['test/cheap']}, ${gw.app.gateway.sql.json({ temperature: 0.3, max_tokens: 40, stop: ['END'] })})`
      await gw.app.gateway.keys.invalidate({ accountId: account })
      const from = gw.upstream.requests.length
      const response = await chat({ model: '@preset/writer', temperature: 0.9 }, own)
      expect(response.status).toBe(200)
      expect(served(response).model).toBe('test/cheap')
      const sent = gw.upstream.requests.slice(from).at(-1)!.body
      expect({
        temperature: sent.temperature,
        max: sent.max_completion_tokens,
        stop: sent.stop,
      }).toEqual({ temperature: 0.9, max: 40, stop: ['END'] })

      await gw.app.gateway
        .sql`UPDATE presets SET model = 'test/pricey', fallbacks = '{}' WHERE account_id = ${account} AND slug = 'writer'`
      await gw.app.gateway.keys.invalidate({ accountId: account })
      expect(served(await chat({ model: '@preset/writer' }, own)).model).toBe('test/pricey')

      const listing = (await (
        await gw.app.api.handle(
          new Request('http://gateway.test/v1/models', {
            headers: { authorization: `Bearer ${own}` },
          }),
        )
      ).json()) as {
        data: { id: string; preset?: { model: string } }[]
      }
      expect(listing.data.find((entry) => entry.id === '@preset/writer')?.preset?.model).toBe(
        'test/pricey',
      )
    })

    test("a refusal of the preset's model or fallback is said of the preset; of the request's own fallbacks, of them", async () => {
      const account = await gw.account('1')
      const own = await gw.key(account, { allowedModels: ['test/cheap'] })
      await gw.app.gateway.sql`
        INSERT INTO presets (account_id, slug, model, fallbacks, params)
        VALUES (${account}, 'wide', 'test/cheap', ${['test/pricey']}, ${gw.app.gateway.sql.json({})}),
               (${account}, 'other', 'test/pricey', ${[]}, ${gw.app.gateway.sql.json({})})`
      await gw.app.gateway.keys.invalidate({ accountId: account })
      const fallback = await expectError(
        await chat({ model: '@preset/wide' }, own.key),
        403,
        'model_not_allowed',
      )
      expect(fallback.param).toBe('model')
      expect(fallback.message).toStartWith(
        "@preset/wide (its fallback 1): test/pricey is not allowed by this key's allowed models.",
      )
      const model = await expectError(
        await chat({ model: '@preset/other' }, own.key),
        403,
        'model_not_allowed',
      )
      expect(model.param).toBe('model')
      expect(model.message).toStartWith('@preset/other (its model): test/pricey is not allowed')
      // In the Messages style too, whose fallbacks field has another name.
      const messages = await gw.app.api.handle(
        new Request('http://gateway.test/v1/messages', {
          method: 'POST',
          headers: {
            'x-api-key': own.key,
            'content-type': 'application/json',
            'anthropic-version': '2023-06-01',
          },
          body: JSON.stringify({ model: '@preset/wide', max_tokens: 10, messages: hello }),
        }),
      )
      expect(messages.status).toBe(403)
      const body = (await messages.json()) as { error: { type: string; message: string } }
      expect(body.error.message).toStartWith('@preset/wide (its fallback 1): test/pricey')
      // The request's own fallbacks replace the preset's: a refusal of one names the request's field.
      const ownField = await expectError(
        await chat({ model: '@preset/wide', models: ['test/pricey'] }, own.key),
        403,
        'model_not_allowed',
      )
      expect(ownField.param).toBe('models[0]')
      expect(ownField.message).toStartWith('models[0]: test/pricey is not allowed')
      expect((await chat({ model: '@preset/wide', models: ['test/cheap'] }, own.key)).status).toBe(
        200,
      )
    })

    test('an unknown preset is 404 unknown_model', async () => {
      expect(
        (await expectError(await chat({ model: '@preset/nope' }), 404, 'unknown_model')).message,
      ).toContain('@preset/nope')
    })
  })

  describe('automatic choice', () => {
    test('a bare name is offered the automatic choices and aliases it may mean', async () => {
      const auto = await expectError(await chat({ model: 'auto:free' }), 404, 'unknown_model')
      expect(auto.message).toContain('did you mean service/auto:free?')
      const alias = await expectError(await chat({ model: 'latest' }), 404, 'unknown_model')
      expect(alias.message).toContain('did you mean test/latest?')
    })

    test('a typo, a wrong letter case or a wrong author is offered the ID it most likely meant, in every style', async () => {
      const fetch = (url: string | URL | Request, init?: RequestInit) =>
        gw.app.api.handle(new Request(url, init))
      const openai = new OpenAI({
        baseURL: 'http://gateway.test/v1',
        apiKey: key,
        maxRetries: 0,
        fetch,
      })
      const anthropic = new Anthropic({
        baseURL: 'http://gateway.test',
        apiKey: key,
        maxRetries: 0,
        fetch,
      })
      const refusal = async (call: Promise<unknown>) => {
        const error = (await call.then(
          () => undefined,
          (failure: unknown) => failure,
        )) as {
          status: number
          error: { code?: string; message: string; error?: { code: string; message: string } }
        }
        expect(error.status).toBe(404)
        const body = error.error.error ?? error.error
        expect(body.code).toBe('unknown_model')
        return body.message
      }
      const chat = (model: string) =>
        refusal(
          openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }),
        )
      expect(await chat('test/chaep')).toContain('Did you mean test/cheap?')
      expect(await chat('test/pricy')).toContain('Did you mean test/pricey?')
      expect(await chat('Test/Cheap')).toContain('Did you mean test/cheap?')
      expect(await chat('other/pricey')).toContain('Did you mean test/pricey?')
      expect(await chat('service/auto:cod')).toContain('Did you mean service/auto:code?')
      expect(await chat('chaep')).toContain(
        'Model IDs have the form <author>/<model>; did you mean test/cheap?',
      )
      // Nothing near: no guess, only where the list is.
      const far = await chat('acme/unrelated-model')
      expect(far).not.toContain('mean')
      expect(far).toContain('GET /v1/models')
      expect(
        await refusal(openai.responses.create({ model: 'test/chepa', input: 'hi' })),
      ).toContain('Did you mean test/cheap?')
      expect(
        await refusal(
          anthropic.messages.create({
            model: 'test/cheap',
            max_tokens: 10,
            messages: [{ role: 'user', content: 'hi' }],
            fallbacks: ['test/priecy'],
          } as Anthropic.MessageCreateParamsNonStreaming),
        ),
      ).toContain('Did you mean test/pricey?')
    })

    test('service/auto picks the first candidate the key may use', async () => {
      expect(served(await chat({ model: 'service/auto' })).model).toBe('test/pricey')
      const account = await gw.account('1')
      const own = (await gw.key(account, { allowedModels: ['test/cheap'] })).key
      expect(served(await chat({ model: 'service/auto' }, own)).model).toBe('test/cheap')
    })

    test('candidates that cannot take the request are skipped', async () => {
      expect(served(await chat({ model: 'service/auto:code' })).model).toBe('test/notools')
      expect(served(await chat({ model: 'service/auto:code', tools: weatherTool })).model).toBe(
        'test/cheap',
      )
    })

    test('no eligible candidate: 503 auto_unresolvable', async () => {
      const account = await gw.account('1')
      const own = (await gw.key(account, { allowedModels: ['test/limited'] })).key
      await expectError(await chat({ model: 'service/auto' }, own), 503, 'auto_unresolvable')
      expect(await holdsEnded(gw, account)).toMatchObject({ heldNano: 0, inFlight: 0 })
    })

    test('no eligible candidate but a fallback the key may use: the fallback answers; one it may not use is refused at its place', async () => {
      const account = await gw.account('1')
      const own = (await gw.key(account, { allowedModels: ['test/notools'] })).key
      const fallback = await chat({ model: 'service/auto', models: ['test/notools'] }, own)
      expect(served(fallback).model).toBe('test/notools')
      await expectError(
        await chat({ model: 'service/auto', models: ['test/cheap'] }, own),
        403,
        'model_not_allowed',
      )
      expect(await holdsEnded(gw, account)).toMatchObject({ heldNano: 0, inFlight: 0 })
    })

    test("candidates left without a provider by the account's restrictions: auto_unresolvable says so rather than 'retry'", async () => {
      const account = await gw.account('1')
      const own = (await gw.key(account)).key
      await gw.app.gateway
        .sql`UPDATE accounts SET allowed_providers = ${['fake-b']} WHERE id = ${account}`
      await gw.app.gateway.keys.invalidate({ accountId: account })
      const anthropic = new Anthropic({
        baseURL: 'http://gateway.test',
        apiKey: own,
        maxRetries: 0,
        fetch: (url, init) => gw.app.api.handle(new Request(url, init)),
      })
      const refused = (await anthropic.messages
        .create({
          model: 'service/auto',
          max_tokens: 10,
          messages: [{ role: 'user', content: 'hi' }],
        })
        .catch((error: unknown) => error)) as InstanceType<typeof Anthropic.APIError>
      expect(refused.status).toBe(503)
      const error = (refused.error as { error: { code: string; message: string } }).error
      expect(error.code).toBe('auto_unresolvable')
      expect(error.message).toContain("allowed by the account's routing restrictions")
      expect(error.message).not.toContain('unavailable right now')
      expect(await holdsEnded(gw, account)).toMatchObject({ heldNano: 0, inFlight: 0 })
    })

    test('every candidate of an automatic choice failing at its provider: 503 auto_unresolvable, nothing charged', async () => {
      const account = await gw.account('3')
      const own = (await gw.key(account)).key
      const calls = upstreamCalls()
      const refused = await expectError(
        await chat({ model: 'service/auto:broken' }, own),
        503,
        'auto_unresolvable',
      )
      expect(refused.message).toContain('service/auto:broken')
      expect(refused.param).toBe('model')
      expect(calls()).toEqual(['down-a', 'down-b'])
      // The same failure for a model named directly says the model is unavailable.
      await expectError(await chat({ model: 'test/down-a' }, own), 503, 'model_unavailable')
      expect(await holdsEnded(gw, account)).toMatchObject({
        heldNano: 0,
        inFlight: 0,
        balanceNano: 3_000_000_000,
      })
    })

    test('aliases resolve to their model; one that leads nowhere is 503 model_alias_unavailable', async () => {
      expect(served(await chat({ model: 'test/latest' })).model).toBe('test/cheap')
      await expectError(await chat({ model: 'test/dangling' }), 503, 'model_alias_unavailable')
    })
  })

  describe('Auto Free never reaches a paid model', () => {
    test('it serves free models and counts the shared allowance, then 429 free_quota_exceeded with Retry-After', async () => {
      const account = await gw.account('5')
      const [first, second] = [(await gw.key(account)).key, (await gw.key(account)).key]
      const calls = upstreamCalls()
      for (const own of [first, second, first]) {
        const response = await chat({ model: 'service/auto:free' }, own)
        expect(served(response).model).toBe('test/free-a')
        expect(response.headers.get('x-service-cost-usd')).toBe('0')
      }
      const response = await chat({ model: 'service/auto:free' }, second)
      await expectError(response, 429, 'free_quota_exceeded')
      const retryAfter = Number(response.headers.get('retry-after'))
      expect(retryAfter).toBeGreaterThan(0)
      expect(retryAfter).toBeLessThanOrEqual(86_400)
      expect(calls().filter((name) => paidUpstreams.has(name))).toEqual([])
      // Paid requests of the account are not affected.
      expect((await chat({ model: 'test/cheap' }, second)).status).toBe(200)
    })

    test('the first candidate decides: a paid model with a free fallback spends no allowance, a free one with a paid fallback does', async () => {
      const own = (await gw.key(await gw.account('5'))).key
      for (let i = 0; i < 4; i++) {
        const response = await chat({ model: 'test/cheap', models: ['test/free-a'] }, own)
        expect(served(response).model).toBe('test/cheap')
      }
      for (let i = 0; i < 3; i++)
        expect(served(await chat({ model: 'service/auto:free' }, own)).model).toBe('test/free-a')
      await expectError(
        await chat({ model: 'test/free-a', models: ['test/cheap'] }, own),
        429,
        'free_quota_exceeded',
      )
      expect(served(await chat({ model: 'test/cheap', models: ['test/free-a'] }, own)).model).toBe(
        'test/cheap',
      )
    })

    test('every refusal stays free: failures, features, access, paid fallbacks', async () => {
      const account = await gw.account('5')
      const own = (await gw.key(account)).key
      const calls = upstreamCalls()
      await expectError(
        await chat({ model: 'service/auto:free-broken' }, own),
        503,
        'auto_unresolvable',
      )
      const limited = await expectError(
        await chat({ model: 'service/auto:free-limited' }, own),
        503,
        'auto_unresolvable',
      )
      expect(limited.message).toContain('rate limiting')
      const noTools = await expectError(
        await chat(
          { model: 'service/auto:free', tools: weatherTool },
          (await gw.key(await gw.account('1'), { allowedModels: ['test/free-b'] })).key,
        ),
        400,
        'invalid_request',
      )
      expect(noTools.param).toBe('tools')
      const restricted = (await gw.key(account, { allowedModels: ['test/cheap'] })).key
      await expectError(
        await chat({ model: 'service/auto:free' }, restricted),
        503,
        'auto_unresolvable',
      )
      expect(
        (
          await expectError(
            await chat({ model: 'service/auto:free', models: ['test/cheap'] }, own),
            400,
            'invalid_request',
          )
        ).param,
      ).toBe('models[0]')
      expect(
        (
          await expectError(
            await chat({ model: 'service/auto:free', models: ['service/auto'] }, own),
            400,
            'invalid_request',
          )
        ).param,
      ).toBe('models[0]')
      expect(calls().filter((name) => paidUpstreams.has(name))).toEqual([])
      expect(await holdsEnded(gw, account)).toMatchObject({ heldNano: 0, inFlight: 0 })
    })
  })

  describe('upstream health', () => {
    test('a route that keeps failing is skipped until its breaker half-opens', async () => {
      const breaking = [
        { provider: 'fake', model: 'breaker-a?status=502' },
        { provider: 'fake-b', model: 'breaker-b' },
      ]
      const local = await startTestGateway({
        store: 'memory',
        database: 'postgres',
        models: [testModel('test/breaker', 'unused', { routes: breaking })],
        env: { BREAKER_FAILURES: '3', BREAKER_OPEN_MS: '400' },
      })
      try {
        const own = (await local.key(await local.account('1'))).key
        for (let i = 0; i < 5; i++)
          expect((await local.chat(own, { model: 'test/breaker', messages: hello })).status).toBe(
            200,
          )
        const names = local.upstream.requests.map(
          (request) => String(request.body.model).split('?')[0]!,
        )
        expect(names.filter((name) => name === 'breaker-a')).toHaveLength(3)
        await Bun.sleep(450)
        const before = local.upstream.requests.length
        expect((await local.chat(own, { model: 'test/breaker', messages: hello })).status).toBe(200)
        expect(
          local.upstream.requests
            .slice(before)
            .map((request) => String(request.body.model).split('?')[0]!),
        ).toEqual(['breaker-a', 'breaker-b'])
        const states = [...local.app.gateway.health.states()]
        expect(states).toEqual([{ provider: 'fake', model: 'breaker-a?status=502', state: 2 }])
      } finally {
        await local.close()
      }
    })

    test('a probe the provider answers closes the breaker, even when it refuses the request', async () => {
      // Two failures open the route; its probe is a request the provider refuses (400), then it serves.
      const local = await startTestGateway({
        store: 'memory',
        database: 'postgres',
        models: [testModel('test/refusing-probe', 'probe?statuses=500,500,400')],
        env: { BREAKER_FAILURES: '2', BREAKER_OPEN_MS: '300' },
      })
      try {
        const own = (await local.key(await local.account('1'))).key
        const ask = () => local.chat(own, { model: 'test/refusing-probe', messages: hello })
        for (let i = 0; i < 2; i++) await expectError(await ask(), 503, 'model_unavailable')
        await expectError(await ask(), 503, 'model_unavailable')
        expect(local.upstream.requests).toHaveLength(2)
        await Bun.sleep(350)
        await expectError(await ask(), 400, 'invalid_request')
        // The provider answered the probe: the route serves at once, not after another open spell.
        expect((await ask()).status).toBe(200)
        expect(local.upstream.requests).toHaveLength(4)
        expect([...local.app.gateway.health.states()].map((each) => each.state)).toEqual([0])
      } finally {
        await local.close()
      }
    })

    test('every route open: 503 model_unavailable with Retry-After, nothing held', async () => {
      const local = await startTestGateway({
        store: 'memory',
        database: 'postgres',
        models: [testModel('test/down', 'down?status=500')],
        env: { BREAKER_FAILURES: '2', BREAKER_OPEN_MS: '30000' },
      })
      try {
        const account = await local.account('1')
        const own = (await local.key(account)).key
        for (let i = 0; i < 2; i++)
          await expectError(
            await local.chat(own, { model: 'test/down', messages: hello }),
            503,
            'model_unavailable',
          )
        const before = local.upstream.requests.length
        const response = await local.chat(own, { model: 'test/down', messages: hello })
        await expectError(response, 503, 'model_unavailable')
        expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0)
        expect(local.upstream.requests.length).toBe(before)
        expect(await holdsEnded(local, account)).toMatchObject({ heldNano: 0, inFlight: 0 })
      } finally {
        await local.close()
      }
    })

    test('a paused provider: 503 upstream_capacity_unavailable with Retry-After; other routes still serve', async () => {
      const calls = upstreamCalls()
      await gw.app.gateway
        .sql`INSERT INTO provider_pauses (provider_id, paused_until, reason) VALUES ('fake', now() + interval '90 seconds', 'test')`
      try {
        await gw.app.gateway.health.refreshPauses(gw.app.gateway.sql)
        const response = await chat({ model: 'test/cheap' })
        await expectError(response, 503, 'upstream_capacity_unavailable')
        const retryAfter = Number(response.headers.get('retry-after'))
        expect(retryAfter).toBeGreaterThan(80)
        expect(retryAfter).toBeLessThanOrEqual(90)
        // Longer than a minute: the SDKs hand it to the caller instead of sleeping through it twice.
        expect(response.headers.get('x-should-retry')).toBe('false')
        expect(served(await chat({ model: 'test/two-routes' })).provider).toBe('fake-b')
        expect(calls()).toEqual(['route-b'])
        expect(await holdsEnded(gw, accountId)).toMatchObject({ heldNano: 0, inFlight: 0 })
      } finally {
        await gw.app.gateway.sql`DELETE FROM provider_pauses WHERE provider_id = 'fake'`
        await gw.app.gateway.health.refreshPauses(gw.app.gateway.sql)
      }
      expect((await chat({ model: 'test/cheap' })).status).toBe(200)
    })

    test('a pause ending within a minute is left to the SDKs to wait out and retry', async () => {
      await gw.app.gateway
        .sql`INSERT INTO provider_pauses (provider_id, paused_until, reason) VALUES ('fake', now() + interval '30 seconds', 'test')`
      try {
        await gw.app.gateway.health.refreshPauses(gw.app.gateway.sql)
        const response = await chat({ model: 'test/cheap' })
        await expectError(response, 503, 'upstream_capacity_unavailable')
        expect(Number(response.headers.get('retry-after'))).toBeLessThanOrEqual(30)
        expect(response.headers.get('x-should-retry')).toBe('true')
      } finally {
        await gw.app.gateway.sql`DELETE FROM provider_pauses WHERE provider_id = 'fake'`
        await gw.app.gateway.health.refreshPauses(gw.app.gateway.sql)
      }
    })
  })

  describe('limits', () => {
    test('a prompt beyond the context: 400 context_too_long with its token count; a longer-context fallback serves it', async () => {
      const long = [{ role: 'user', content: 'lorem ipsum dolor sit amet '.repeat(400) }]
      const error = await expectError(
        await gw.chat(key, { model: 'test/small', messages: long }),
        400,
        'context_too_long',
      )
      const count = Number(/has (\d+) tokens/.exec(error.message)?.[1])
      expect(count).toBeGreaterThan(1_000)
      expect(count).toBeLessThan(3_000)
      expect(error.message).toContain('1000 tokens')
      const response = await gw.chat(key, {
        model: 'test/small',
        models: ['test/cheap'],
        messages: long,
      })
      expect(served(response).model).toBe('test/cheap')
      // Short prompts are not tokenized at all, and fit.
      expect((await chat({ model: 'test/small' })).status).toBe(200)
    })

    test("a tool's description counts once toward the context", async () => {
      // About 250 tokens of description beside the tool-use prompt's 600: fits 1,000 once, not twice.
      const tools = (words: number) => [
        {
          type: 'function',
          function: {
            name: 'lookup',
            description: 'lorem ipsum dolor sit amet '.repeat(words),
            parameters: { type: 'object', properties: {} },
          },
        },
      ]
      expect((await chat({ model: 'test/small', tools: tools(40) })).status).toBe(200)
      const error = await expectError(
        await chat({ model: 'test/small', tools: tools(80) }),
        400,
        'context_too_long',
      )
      const count = Number(/has (\d+) tokens/.exec(error.message)?.[1])
      expect(count).toBeGreaterThan(1_000)
      expect(count).toBeLessThan(1_300)
    })

    test('oversized or deeply nested schemas are refused by field', async () => {
      const many = Array.from({ length: 129 }, (_, i) => ({
        type: 'function',
        function: { name: `f${i}`, parameters: { type: 'object' } },
      }))
      expect(
        (
          await expectError(
            await chat({ model: 'test/cheap', tools: many }),
            400,
            'invalid_request',
          )
        ).param,
      ).toBe('tools')
      let deep: Record<string, unknown> = { type: 'string' }
      for (let i = 0; i < 14; i++) deep = { type: 'object', properties: { x: deep } }
      const nested = [{ type: 'function', function: { name: 'deep', parameters: deep } }]
      expect(
        (
          await expectError(
            await chat({ model: 'test/cheap', tools: nested }),
            400,
            'invalid_request',
          )
        ).param,
      ).toBe('tools[0]')
      const big = {
        type: 'object',
        properties: Object.fromEntries(
          Array.from({ length: 3_000 }, (_, i) => [
            `field_${i}`,
            { type: 'string', description: 'x'.repeat(20) },
          ]),
        ),
      }
      const format = { type: 'json_schema', json_schema: { name: 'big', schema: big } }
      expect(
        (
          await expectError(
            await chat({ model: 'test/cheap', response_format: format }),
            400,
            'invalid_request',
          )
        ).param,
      ).toBe('response_format.json_schema.schema')
    })

    test('invalid keys from one address are limited; a valid key still works', async () => {
      const local = await startTestGateway({
        store: 'redis',
        database: 'postgres',
        env: { INVALID_KEYS_PER_MINUTE: '3' },
      })
      try {
        const own = (await local.key(await local.account('1'))).key
        const bad = `svc-live-${'1'.repeat(26)}`
        for (let i = 0; i < 3; i++)
          await expectError(
            await local.chat(bad, { model: 'test/cheap', messages: hello }),
            401,
            'invalid_api_key',
          )
        const limited = await local.chat(bad, { model: 'test/cheap', messages: hello })
        await expectError(limited, 429, 'usage_limit_exceeded')
        expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
        expect((await local.chat(own, { model: 'test/cheap', messages: hello })).status).toBe(200)
      } finally {
        await local.close()
      }
    })
  })
})
