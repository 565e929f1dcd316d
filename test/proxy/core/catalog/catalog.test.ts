import { describe, expect, test } from 'bun:test'
import { buildCatalog, CatalogError, loadCatalog } from '../../../../proxy/core/catalog/catalog.ts'
import { costNano, toPricing } from '../../../../proxy/core/catalog/pricing.ts'
import { rejection } from '../../../helpers/settle.ts'

const provider = { id: 'p', style: 'openai', baseUrl: 'http://127.0.0.1:1/v1/', apiKeyEnv: 'P_KEY' }
const model = {
  id: 'a/m',
  contextLength: 1000,
  maxOutputTokens: 100,
  pricing: { inputPerMTok: 0.15, outputPerMTok: 0.6 },
  routes: [{ provider: 'p', model: 'm' }],
}

describe('catalog', () => {
  test('the shipped catalog is valid and every model has a route', async () => {
    const catalog = await loadCatalog('catalog.yaml', {})
    expect(catalog.models.size).toBeGreaterThan(10)
    for (const entry of catalog.models.values()) expect(entry.routes.length).toBeGreaterThan(0)
    expect(catalog.models.get('openai/gpt-4o-mini')!.pricing).toEqual({
      inputNanoPerMTok: 150_000_000,
      outputNanoPerMTok: 600_000_000,
      cachedInputNanoPerMTok: 75_000_000,
      cacheWriteNanoPerMTok: 150_000_000,
    })
  })

  test('provider keys come from the variable the catalog names', () => {
    const catalog = buildCatalog({ providers: [provider], models: [model] }, { P_KEY: 'secret' })
    expect(catalog.providers.get('p')).toMatchObject({
      apiKey: 'secret',
      baseUrl: 'http://127.0.0.1:1/v1',
    })
    expect(
      buildCatalog({ providers: [provider], models: [model] }, {}).providers.get('p')!.apiKey,
    ).toBeUndefined()
  })

  test('every problem in a catalog is reported with its place', () => {
    const broken = {
      providers: [provider, provider],
      models: [
        { ...model, routes: [{ provider: 'nope', model: 'm' }] },
        { ...model, maxOutputTokens: 5000 },
      ],
    }
    expect(() => buildCatalog(broken, {})).toThrow(CatalogError)
    try {
      buildCatalog(broken, {})
    } catch (error) {
      const message = (error as Error).message
      expect(message).toContain('providers[1].id: duplicate provider "p"')
      expect(message).toContain('models[0].routes[0].provider: unknown provider "nope"')
      expect(message).toContain('models[1].id: duplicate model "a/m"')
      expect(message).toContain('models[1].maxOutputTokens: larger than contextLength')
    }
  })

  test('a context or output above 100 million tokens is refused, so token counts fit the records', () => {
    const huge = { providers: [provider], models: [{ ...model, contextLength: 3_000_000_000 }] }
    expect(() => buildCatalog(huge, {})).toThrow('models[0].contextLength')
  })

  test('a provider style outside the known ones names them', () => {
    const typo = { providers: [{ ...provider, style: 'openia' }], models: [model] }
    expect(() => buildCatalog(typo, {})).toThrow(
      'providers[0].style: expected one of openai, anthropic',
    )
  })

  test('fields the catalog format does not have are refused', () => {
    expect(() =>
      buildCatalog({ providers: [provider], models: [{ ...model, prices: {} }] }, {}),
    ).toThrow('models[0].prices: Unexpected property')
    expect(() =>
      buildCatalog({ providers: [{ ...provider, style: 'grpc' }], models: [model] }, {}),
    ).toThrow('providers[0].style')
  })

  test('the shipped catalog has the demo model on the built-in provider, left out with built-ins off', async () => {
    const withDemo = await loadCatalog('catalog.yaml', {})
    expect(withDemo.models.get('demo/echo')).toMatchObject({
      free: true,
      routes: [{ provider: { id: 'demo', builtin: 'echo', available: true } }],
    })
    expect(withDemo.models.get('demo/echo')!.name).toContain('Demo')
    const without = await loadCatalog('catalog.yaml', {}, { builtins: false })
    expect(without.providers.has('demo')).toBe(false)
    expect(without.models.has('demo/echo')).toBe(false)
    expect(without.models.size).toBe(withDemo.models.size - 1)
  })

  test('a provider without apiKeyEnv takes no key and serves; one whose variable is unset does not', () => {
    const local = { id: 'local', style: 'openai', baseUrl: 'http://127.0.0.1:11434/v1' }
    const catalog = buildCatalog(
      {
        providers: [provider, local],
        models: [model, { ...model, id: 'local/m', routes: [{ provider: 'local', model: 'm' }] }],
      },
      {},
    )
    expect(catalog.providers.get('local')).toMatchObject({
      apiKey: undefined,
      apiKeyEnv: undefined,
      available: true,
    })
    expect(catalog.providers.get('p')).toMatchObject({ apiKey: undefined, available: false })
  })

  test('a built-in provider takes no address or key, and only the names the gateway has', () => {
    expect(() =>
      buildCatalog(
        {
          providers: [{ id: 'demo', style: 'openai', builtin: 'echo', baseUrl: 'http://x' }],
          models: [model],
        },
        {},
      ),
    ).toThrow('providers[0]')
    expect(() =>
      buildCatalog(
        { providers: [{ id: 'demo', style: 'openai', builtin: 'llama' }], models: [model] },
        {},
      ),
    ).toThrow('providers[0]')
  })

  test('a missing catalog file names the setting', async () => {
    expect((await rejection(loadCatalog('/nonexistent/catalog.yaml'))).message).toContain(
      'CATALOG_FILE',
    )
  })
})

describe('pricing', () => {
  test('cost is exact integer nano, cached input at its own price, rounded up', () => {
    const pricing = toPricing({ inputPerMTok: 2.5, outputPerMTok: 10, cachedInputPerMTok: 1.25 })
    if (typeof pricing === 'string') throw new Error(pricing)
    expect(
      costNano(pricing, {
        inputTokens: 1_000,
        cachedInputTokens: 400,
        cacheWriteTokens: 0,
        outputTokens: 100,
      }),
    ).toBe(600 * 2_500 + 400 * 1_250 + 100 * 10_000)
    const tiny = toPricing({ inputPerMTok: 0.0375, outputPerMTok: 0 })
    if (typeof tiny === 'string') throw new Error(tiny)
    expect(
      costNano(tiny, {
        inputTokens: 1,
        cachedInputTokens: 0,
        cacheWriteTokens: 0,
        outputTokens: 0,
      }),
    ).toBe(38) // 37.5 rounds up
  })

  test('large requests stay exact beyond the float range of their products', () => {
    const pricing = toPricing({ inputPerMTok: 600, outputPerMTok: 600 })
    if (typeof pricing === 'string') throw new Error(pricing)
    expect(
      costNano(pricing, {
        inputTokens: 2_000_000,
        cachedInputTokens: 0,
        cacheWriteTokens: 0,
        outputTokens: 1_000_003,
      }),
    ).toBe(1_800_001_800_000)
  })

  test('prices with more than nine decimals are refused', () => {
    expect(toPricing({ inputPerMTok: 0.0000000001, outputPerMTok: 1 })).toBe('inputPerMTok')
  })
})
