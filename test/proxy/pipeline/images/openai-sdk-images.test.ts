// The official `openai` package's `images.generate` against the gateway: only the base URL, the key and
// the model ID differ from calling the provider directly.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { describeWith } from '../../../helpers/services.ts'
import { startImageGateway, type ImageGateway } from './image-gateway.ts'

describeWith('postgres', 'openai SDK images', () => {
  let gw: ImageGateway
  let client: OpenAI
  beforeAll(async () => {
    gw = await startImageGateway({ store: 'memory', database: 'postgres' })
    const { apiUrl } = gw.app.listen()
    const accountId = await gw.account('10')
    client = new OpenAI({
      baseURL: `${apiUrl}/v1`,
      apiKey: (await gw.key(accountId)).key,
      maxRetries: 0,
    })
  })
  afterAll(() => gw.close())

  test('images.generate returns the images, usage with its cost, and the service headers', async () => {
    const { data, response } = await client.images
      .generate({
        model: 'test/image-usage',
        prompt: 'a paper crane',
        n: 2,
        size: '1024x1024',
        quality: 'low',
        response_format: 'b64_json',
      })
      .withResponse()
    expect(data.data).toHaveLength(2)
    expect(data.data![0]!.b64_json).toBeString()
    expect(data.usage!.output_tokens).toBe(544)
    expect((data.usage as unknown as { cost: number }).cost).toBe(0.022)
    expect(response.headers.get('x-service-cost-usd')).toBe('0.022')
    expect(response.headers.get('x-service-model')).toBe('test/image-usage')
    expect(response.headers.get('x-request-id')).toMatch(/^req_/)
  })

  test("a failed generation raises the SDK's error with the gateway's code and the status endpoint to check", async () => {
    const failure = await client.images
      .generate({ model: 'test/image', prompt: 'a crane [[status=503]]' })
      .catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(OpenAI.APIError)
    const error = failure as InstanceType<typeof OpenAI.APIError>
    expect(error.status).toBe(502)
    expect(error.code).toBe('image_request_failed')
    expect(error.message).toContain('/v1/images/status?request_id=req_')
  })

  test('without a valid key, a request the gateway would refuse for its body raises AuthenticationError', async () => {
    for (const apiKey of ['svc-live-1111111111111111111111111a', 'not-a-key']) {
      const anonymous = new OpenAI({ baseURL: client.baseURL, apiKey, maxRetries: 0 })
      for (const body of [
        { model: 'test/image', prompt: 'a crane', n: 0 },
        { model: 'test/image', prompt: 'a crane', unknown_field: 1 },
        { model: 'test/image', prompt: '' },
      ]) {
        const failure = await anonymous.images
          .generate(body as OpenAI.Images.ImageGenerateParamsNonStreaming)
          .catch((error: unknown) => error)
        expect(failure).toBeInstanceOf(OpenAI.AuthenticationError)
        expect((failure as InstanceType<typeof OpenAI.APIError>).code).toBe('invalid_api_key')
      }
    }
  })

  test('an unpriced size raises BadRequestError naming the field', async () => {
    const failure = await client.images
      .generate({ model: 'test/image', prompt: 'a crane', size: '1024x1792' })
      .catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(OpenAI.BadRequestError)
    expect((failure as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('size')
  })
})

describeWith(['postgres', 'redis'], 'openai SDK images: the status right after the answer', () => {
  let gw: ImageGateway
  let client: OpenAI
  beforeAll(async () => {
    gw = await startImageGateway({ store: 'redis', database: 'postgres' })
    const { apiUrl } = gw.app.listen()
    client = new OpenAI({
      baseURL: `${apiUrl}/v1`,
      apiKey: (await gw.key(await gw.account('10'))).key,
      maxRetries: 0,
    })
  })
  afterAll(() => gw.close())

  const status = (requestId: string | null) =>
    client.get<{ status: string; cost_usd: string }>('/images/status', {
      query: { request_id: requestId },
    })

  test('reads the charge the answer reported, or its failure, never pending', async () => {
    for (let i = 0; i < 8; i++) {
      const { response } = await client.images
        .generate({ model: 'test/image', prompt: 'a crane', quality: 'low' })
        .withResponse()
      expect(await status(response.headers.get('x-request-id'))).toMatchObject({
        status: 'charged',
        cost_usd: response.headers.get('x-service-cost-usd'),
      })

      const failure = await client.images
        .generate({ model: 'test/image', prompt: 'a crane [[status=500]]' })
        .then(() => undefined)
        .catch((error: unknown) => error as InstanceType<typeof OpenAI.APIError>)
      expect(failure?.code).toBe('image_request_failed')
      expect(await status(failure!.headers!.get('x-request-id'))).toMatchObject({
        status: 'failed',
        cost_usd: '0',
      })
    }
  })
})
