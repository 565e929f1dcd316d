// One model of the catalog, as the SDKs' `models.retrieve()` asks for it: the same object as the model's
// item of the listing, whether the ID's slash comes encoded or literal, under /v1 and /api/v1 and on the
// site; an unknown ID is 404 unknown_model in the client's error shape. Image models are listed too, in
// a shape the SDKs parse, saying what they do and what an image costs.
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import {
  anthropicTestModel,
  startTestGateway,
  testModel,
  type TestGateway,
} from '../../helpers/gateway.ts'
import { describeWith } from '../../helpers/services.ts'

const models = [
  testModel('openai/plain', 'fake'),
  anthropicTestModel('anthropic/plain', 'fake', { name: 'Plain' }),
  // In the catalog, but its only provider's key is not set: nothing here can serve it.
  testModel('openai/unkeyed', 'unkeyed', { routes: [{ provider: 'unkeyed', model: 'unkeyed' }] }),
]

const images = [
  {
    id: 'openai/picture',
    name: 'Picture',
    routes: [{ provider: 'fake', model: 'picture' }],
    defaultSize: '1024x1024',
    defaultQuality: 'standard',
    prices: { '1024x1024/standard': 0.04, '1024x1024/hd': 0.08, '1792x1024/hd': 0.125 },
  },
]

describeWith('postgres', 'catalog routes', () => {
  let gw: TestGateway
  let apiUrl: string
  let siteUrl: string
  let key: string
  let listing: Record<string, unknown>[]
  beforeAll(async () => {
    gw = await startTestGateway({
      store: 'memory',
      database: 'postgres',
      models,
      catalog: {
        images,
        aliases: [{ id: 'openai/unkeyed-latest', target: 'openai/unkeyed' }],
        auto: [
          { id: 'service/auto', candidates: ['openai/unkeyed', 'openai/plain'] },
          { id: 'service/auto:unkeyed', candidates: ['openai/unkeyed'] },
        ],
      },
    })
    ;({ apiUrl, siteUrl } = gw.app.listen())
    const accountId = await gw.account('1')
    key = (await gw.key(accountId)).key
    await gw.app.gateway.sql`
      INSERT INTO presets (account_id, slug, model, fallbacks, params)
      VALUES (${accountId}, 'writer', 'openai/plain', ${['anthropic/plain']}, ${gw.app.gateway.sql.json({})})`
    await gw.app.gateway.keys.invalidate({ accountId })
    const response = await fetch(`${apiUrl}/v1/models`, {
      headers: { authorization: `Bearer ${key}` },
    })
    listing = ((await response.json()) as { data: Record<string, unknown>[] }).data
  })
  afterAll(() => gw.close())

  const item = (id: string) => listing.find((entry) => entry.id === id)!

  test('a model no provider here can serve is not offered, nor its alias, nor as an automatic candidate', () => {
    const ids = listing.map((entry) => entry.id)
    expect(ids).toContain('openai/plain')
    expect(ids).not.toContain('openai/unkeyed')
    expect(ids).not.toContain('openai/unkeyed-latest')
    expect(ids).not.toContain('service/auto:unkeyed')
    expect(item('service/auto').auto_candidates).toEqual(['openai/plain'])
  })

  test('the OpenAI SDK retrieves a model by its ID: the listing’s item for it', async () => {
    const client = new OpenAI({ baseURL: `${apiUrl}/v1`, apiKey: key, maxRetries: 0 })
    expect(item('openai/plain')).toBeDefined()
    expect(await client.models.retrieve('openai/plain')).toEqual(item('openai/plain') as never)
    const alias = new OpenAI({ baseURL: `${apiUrl}/api/v1`, apiKey: key, maxRetries: 0 })
    expect(await alias.models.retrieve('anthropic/plain')).toEqual(item('anthropic/plain') as never)
  })

  test('the Anthropic SDK retrieves a model too, with its key as x-api-key', async () => {
    const client = new Anthropic({ baseURL: apiUrl, apiKey: key, maxRetries: 0 })
    const model = await client.models.retrieve('anthropic/plain')
    expect(model).toMatchObject({ id: 'anthropic/plain', type: 'model', display_name: 'Plain' })
    const raw = await fetch(`${apiUrl}/v1/models/anthropic%2Fplain`, {
      headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
    })
    expect(raw.status).toBe(200)
  })

  test('the literal slash works as the encoded one, and the account’s presets are found', async () => {
    for (const path of ['openai/plain', 'openai%2Fplain', '%40preset%2Fwriter', '@preset/writer']) {
      const response = await fetch(`${apiUrl}/v1/models/${path}`, {
        headers: { authorization: `Bearer ${key}` },
      })
      expect(response.status).toBe(200)
      // A preset's entry is dated when it is read.
      const { created: _c, created_at: _a, ...entry } = item(decodeURIComponent(path))
      expect(await response.json()).toMatchObject(entry)
    }
  })

  describe('image models', () => {
    test('the OpenAI SDK lists them beside the chat models, every entry a model it parses', async () => {
      const client = new OpenAI({ baseURL: `${apiUrl}/v1`, apiKey: key, maxRetries: 0 })
      const listed = []
      for await (const model of client.models.list()) listed.push(model)
      expect(listed.map((model) => model.id)).toEqual(listing.map((entry) => entry.id as string))
      expect(listed.map((model) => model.id)).toContain('openai/picture')
      for (const model of listed) {
        expect(model.object).toBe('model')
        expect(Number.isInteger(model.created)).toBe(true)
        expect(model.owned_by).toBe(model.id.split('/')[0]!.replace(/^@/, ''))
      }
    })

    test('an image model says it makes images, with its prices per image as USD strings', async () => {
      const client = new OpenAI({ baseURL: `${apiUrl}/v1`, apiKey: key, maxRetries: 0 })
      const model = await client.models.retrieve('openai/picture')
      expect(model).toEqual(item('openai/picture') as never)
      expect(model).toMatchObject({
        id: 'openai/picture',
        object: 'model',
        owned_by: 'openai',
        display_name: 'Picture',
        output_modalities: ['image'],
        styles: ['images'],
        pricing: {
          unit: 'usd_per_image',
          per_image: {
            '1024x1024/standard': '0.04',
            '1024x1024/hd': '0.08',
            '1792x1024/hd': '0.125',
          },
        },
        default_size: '1024x1024',
        default_quality: 'standard',
        free: false,
      })
      expect(model).not.toHaveProperty('context_length')
      // A chat model says what it outputs the same way, and keeps its prices per million tokens.
      expect(item('openai/plain')).toMatchObject({
        output_modalities: ['text'],
        styles: ['chat', 'messages', 'responses'],
        pricing: { unit: 'usd_per_million_tokens', input: '1', output: '2' },
      })
    })

    test('the Anthropic SDK lists and retrieves them too', async () => {
      const client = new Anthropic({ baseURL: apiUrl, apiKey: key, maxRetries: 0 })
      const ids = []
      for await (const model of client.models.list()) ids.push(model.id)
      expect(ids).toContain('openai/picture')
      expect(await client.models.retrieve('openai/picture')).toMatchObject({
        id: 'openai/picture',
        type: 'model',
        display_name: 'Picture',
      })
    })

    test('the site’s public catalog lists them', async () => {
      const response = await fetch(`${siteUrl}/api/v1/models`)
      const data = ((await response.json()) as { data: { id: string; styles: string[] }[] }).data
      expect(data.find((entry) => entry.id === 'openai/picture')?.styles).toEqual(['images'])
    })
  })

  describe('an unknown model is 404 unknown_model', () => {
    test('in the OpenAI error shape, suggesting the full ID for a bare name', async () => {
      const client = new OpenAI({ baseURL: `${apiUrl}/v1`, apiKey: key, maxRetries: 0 })
      const caught = await client.models.retrieve('plain').catch((error: unknown) => error)
      expect(caught).toBeInstanceOf(OpenAI.NotFoundError)
      const error = caught as InstanceType<typeof OpenAI.NotFoundError>
      expect(error.code).toBe('unknown_model')
      expect(error.message).toContain('did you mean openai/plain or anthropic/plain?')
      expect(error.headers?.get('x-service-error-code')).toBe('unknown_model')
    })

    test('in the Messages error shape for a Messages-style client', async () => {
      const client = new Anthropic({ baseURL: apiUrl, apiKey: key, maxRetries: 0 })
      const caught = await client.models.retrieve('nobody/nothing').catch((error: unknown) => error)
      expect(caught).toBeInstanceOf(Anthropic.NotFoundError)
      const error = caught as InstanceType<typeof Anthropic.NotFoundError> & {
        error: { error: { type: string; code: string } }
      }
      expect(error.error.error).toMatchObject({ type: 'not_found_error', code: 'unknown_model' })
      expect(error.headers?.get('request-id')).toMatch(/^req_/)
    })
  })

  test('a key is needed, as for the listing', async () => {
    const response = await fetch(`${apiUrl}/v1/models/openai%2Fplain`)
    expect(response.status).toBe(401)
  })

  test('the site’s public catalog serves one model the same way', async () => {
    const found = await fetch(`${siteUrl}/api/v1/models/openai%2Fplain`)
    expect(found.status).toBe(200)
    expect(await found.json()).toMatchObject({ id: 'openai/plain', object: 'model' })
    const unknown = await fetch(`${siteUrl}/api/v1/models/nobody/nothing`)
    expect(unknown.status).toBe(404)
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('unknown_model')
  })
})
