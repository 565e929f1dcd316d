// What an image request must be before anything is held: the body, the model, access and the
// guardrail; and the billing status endpoint, readable only by the account that made the request.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { describeWith } from '../../../helpers/services.ts'
import { startImageGateway, type ImageGateway } from './image-gateway.ts'

type ErrorBody = { error: { code: string; message: string; param: string | null } }

describeWith('postgres', 'image requests', () => {
  let gw: ImageGateway
  let key: string
  let accountId: string
  beforeAll(async () => {
    gw = await startImageGateway({ store: 'memory', database: 'postgres' })
    accountId = await gw.account('10')
    key = (await gw.key(accountId)).key
  })
  afterAll(() => gw.close())

  const refusal = async (response: Response, status: number, code: string) => {
    expect(response.status).toBe(status)
    expect(response.headers.get('x-service-error-code')).toBe(code)
    const body = (await response.json()) as ErrorBody
    expect(body.error.code).toBe(code)
    return body.error
  }

  describe('the body', () => {
    test('an unknown size is 400 naming the field and listing the sizes offered', async () => {
      const error = await refusal(
        await gw.images(key, { model: 'test/image', prompt: 'x', size: '2048x2048' }),
        400,
        'invalid_request',
      )
      expect(error.param).toBe('size')
      expect(error.message).toBe(
        'size: 2048x2048 is not offered for test/image; valid sizes: 1024x1024, 1536x1024',
      )
    })

    test('a quality not priced at the size is 400 listing the qualities of that size', async () => {
      const error = await refusal(
        await gw.images(key, {
          model: 'test/image',
          prompt: 'x',
          size: '1536x1024',
          quality: 'high',
        }),
        400,
        'invalid_request',
      )
      expect(error.param).toBe('quality')
      expect(error.message).toContain('valid qualities: medium')
    })

    test('fields outside the Images API, a missing or empty prompt, n out of range, streaming: 400 naming the field', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ model: 'test/image', prompt: 'x', seed: 3 }, 'seed'],
        [{ model: 'test/image' }, 'prompt'],
        [{ model: 'test/image', prompt: '' }, 'prompt'],
        [{ model: 'test/image', prompt: 'x'.repeat(32_001) }, 'prompt'],
        [{ model: 'test/image', prompt: 'x', n: 11 }, 'n'],
        [{ model: 'test/image', prompt: 'x', n: 0 }, 'n'],
        [{ model: 'test/image', prompt: 'x', response_format: 'png' }, 'response_format'],
        [{ model: 'test/image', prompt: 'x', stream: true }, 'stream'],
        [{ prompt: 'x' }, 'model'],
      ]
      for (const [body, param] of cases) {
        const error = await refusal(await gw.images(key, body), 400, 'invalid_request')
        expect(error.param).toBe(param)
      }
      expect(gw.imageCalls()).toBe(0)
    })

    test('a chat model is 400 saying it is not an image model; an unknown one is 404, with the full ID for a bare name', async () => {
      const chat = await refusal(
        await gw.images(key, { model: 'test/cheap', prompt: 'x' }),
        400,
        'invalid_request',
      )
      expect(chat.message).toContain('test/cheap is not an image model')
      await refusal(
        await gw.images(key, { model: 'test/nothing', prompt: 'x' }),
        404,
        'unknown_model',
      )
      const bare = await refusal(
        await gw.images(key, { model: 'image', prompt: 'x' }),
        404,
        'unknown_model',
      )
      expect(bare.message).toContain('did you mean test/image?')
    })

    test('a request without a key is 401', async () => {
      await refusal(
        await gw.images(undefined, { model: 'test/image', prompt: 'x' }),
        401,
        'invalid_api_key',
      )
    })
  })

  describe('access', () => {
    test("a model outside the key's allowed models is 403 model_not_allowed, nothing held or sent", async () => {
      const limited = (await gw.key(accountId, { allowedModels: ['test/cheap'] })).key
      const error = await refusal(
        await gw.images(limited, { model: 'test/image', prompt: 'x' }),
        403,
        'model_not_allowed',
      )
      expect(error.message).toBe(
        "test/image is not allowed by this key's allowed models. No image model is allowed for this key.",
      )
      expect(gw.imageCalls()).toBe(0)
      expect(await gw.app.gateway.store.snapshot(accountId)).toMatchObject({ heldNano: 0 })
    })

    test('an image model can be on a key allowlist', async () => {
      const images = (await gw.key(accountId, { allowedModels: ['test/image'] })).key
      expect((await gw.images(images, { model: 'test/image', prompt: 'x' })).status).toBe(200)
    })
  })

  test('an image request is counted in the metrics under its catalog model, not as other', async () => {
    expect((await gw.images(key, { model: 'test/image', prompt: 'x' })).status).toBe(200)
    const metrics = await (
      await gw.app.api.handle(new Request('http://gateway.test/metrics'))
    ).text()
    expect(metrics).toContain(
      'gateway_requests_total{style="images",model="test/image",provider="fake",status="200"}',
    )
  })

  describe('the guardrail', () => {
    test('a blocking filter refuses the prompt with 403 guardrail_blocked; a redacting one rewrites what the provider receives and the answer says so', async () => {
      const guarded = await gw.key(accountId)
      const guardrail = `gr_${guarded.id}`
      const filters = [
        { detector: 'keywords', action: 'block', keywords: ['forbidden'] },
        { detector: 'email', action: 'redact' },
      ]
      await gw.app.gateway
        .sql`INSERT INTO guardrails (id, account_id, name, filters) VALUES (${guardrail}, ${accountId}, 'g', ${gw.app.gateway.sql.json(filters)})`
      await gw.app.gateway
        .sql`UPDATE api_keys SET guardrail_id = ${guardrail} WHERE id = ${guarded.id}`
      const calls = gw.imageCalls()
      const blocked = await refusal(
        await gw.images(guarded.key, { model: 'test/image', prompt: 'a forbidden door' }),
        403,
        'guardrail_blocked',
      )
      expect(blocked.message).not.toContain('forbidden door')
      expect(gw.imageCalls()).toBe(calls)

      const response = await gw.images(guarded.key, {
        model: 'test/image',
        prompt: 'a poster for ada@example.com',
      })
      expect(response.status).toBe(200)
      expect(response.headers.get('x-service-guardrail-redactions')).toBe('email=1')
      const sent = gw.upstream.requests
        .filter((request) => request.path.endsWith('/images/generations'))
        .at(-1)!
      expect(String(sent.body.prompt)).toStartWith('a poster for ')
      expect(String(sent.body.prompt)).not.toContain('ada@example.com')
    })
  })

  describe('the status endpoint', () => {
    let requestId: string
    beforeAll(async () => {
      const response = await gw.images(key, { model: 'test/image', prompt: 'a harbour' })
      expect(response.status).toBe(200)
      requestId = response.headers.get('x-request-id')!
    })

    test('the account that made the request reads its billing status', async () => {
      let status: Record<string, unknown> = {}
      for (let tries = 0; tries < 100 && status.status !== 'charged'; tries++) {
        status = (await (await gw.status(key, requestId)).json()) as Record<string, unknown>
        if (status.status !== 'charged') await Bun.sleep(20)
      }
      expect(status).toMatchObject({
        request_id: requestId,
        status: 'charged',
        model: 'test/image',
        provider: 'fake',
        size: '1024x1024',
        quality: 'medium',
        images: 1,
        images_returned: 1,
        cost_usd: '0.042',
        hold_usd: '0.042',
        error_code: null,
      })
      expect(
        Date.parse(status.cost_deadline as string) - Date.parse(status.created_at as string),
      ).toBeGreaterThan(3_590_000)
      expect(status.resolved_at).toBeString()
    })

    test("another key of the same account reads it too; another account's key gets the same 404 as an unknown ID", async () => {
      const sibling = (await gw.key(accountId)).key
      expect((await gw.status(sibling, requestId)).status).toBe(200)
      const stranger = (await gw.key(await gw.account('1'))).key
      const foreign = await refusal(await gw.status(stranger, requestId), 404, 'not_found')
      const unknown = await refusal(await gw.status(key, 'req_unknown'), 404, 'not_found')
      expect(foreign.message.replace(requestId, 'ID')).toBe(
        unknown.message.replace('req_unknown', 'ID'),
      )
    })

    test('a missing request_id is 400; a missing key is 401; the /api/v1 alias answers the same', async () => {
      expect((await refusal(await gw.status(key, null), 400, 'invalid_request')).param).toBe(
        'request_id',
      )
      const anonymous = await gw.app.api.handle(
        new Request(`http://gateway.test/v1/images/status?request_id=${requestId}`),
      )
      expect(anonymous.status).toBe(401)
      const alias = await gw.app.api.handle(
        new Request(`http://gateway.test/api/v1/images/status?request_id=${requestId}`, {
          headers: { authorization: `Bearer ${key}` },
        }),
      )
      expect(alias.status).toBe(200)
    })
  })
})
