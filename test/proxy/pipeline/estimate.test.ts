import { describe, expect, test } from 'bun:test'
import { buildCatalog } from '../../../proxy/core/catalog/catalog.ts'
import { estimate } from '../../../proxy/pipeline/estimate.ts'

const catalog = buildCatalog(
  {
    providers: [{ id: 'p', style: 'openai', baseUrl: 'http://127.0.0.1:1', apiKeyEnv: 'K' }],
    models: [
      {
        id: 'a/cheap',
        contextLength: 1_000,
        maxOutputTokens: 100,
        pricing: { inputPerMTok: 1, outputPerMTok: 2 },
        routes: [{ provider: 'p', model: 'x' }],
      },
      {
        id: 'a/cached',
        contextLength: 10_000,
        maxOutputTokens: 100,
        pricing: { inputPerMTok: 1, outputPerMTok: 2, cacheWritePerMTok: 1.25 },
        routes: [{ provider: 'p', model: 'z' }],
      },
      {
        id: 'a/dear',
        contextLength: 600,
        maxOutputTokens: 500,
        pricing: { inputPerMTok: 10, outputPerMTok: 20 },
        routes: [{ provider: 'p', model: 'y' }],
      },
    ],
  },
  {},
)
const candidate = (id: string) => ({
  model: catalog.models.get(id)!,
  routes: catalog.models.get(id)!.routes,
})

describe('estimate', () => {
  test('the hold is input bytes plus overhead at the input price and the output limit at the output price', () => {
    const result = estimate([candidate('a/cheap')], { textBytes: 400, images: 0, messages: 2 }, 50)
    expect(result.holdNano).toBe((400 + 16) * 1_000 + 50 * 2_000)
    expect(result.tokens).toBe(100 + 16 + 50)
  })

  test('without an output limit the model maximum is held; the input is capped at the context', () => {
    expect(
      estimate([candidate('a/cheap')], { textBytes: 5_000, images: 0, messages: 1 }, undefined)
        .holdNano,
    ).toBe(1_000 * 1_000 + 100 * 2_000)
  })

  test('with fallbacks the most expensive candidate sets the hold', () => {
    // An image adds 2,000 tokens: the bound (2,018) passes both contexts, so each is capped at its own.
    const result = estimate(
      [candidate('a/cheap'), candidate('a/dear')],
      { textBytes: 10, images: 1, messages: 1 },
      undefined,
    )
    const cheap = 1_000 * 1_000 + 100 * 2_000
    const dear = 600 * 10_000 + 500 * 20_000
    expect(result.holdNano).toBe(Math.max(cheap, dear))
    expect(result.tokens).toBe(Math.ceil(10 / 4) + 2_008 + 500)
  })

  test('a request that offers tools holds the provider’s tool-use prompt as input too', () => {
    const prompt = { textBytes: 100, images: 0, messages: 1 }
    const plain = estimate([candidate('a/cached')], prompt, 10)
    const withTools = estimate([candidate('a/cached')], { ...prompt, tools: true }, 10)
    expect(withTools.promptBoundTokens - plain.promptBoundTokens).toBe(600)
    expect(withTools.tokens - plain.tokens).toBe(600)
  })

  test('input that may be written to the prompt cache is held at the write price when that is dearer', () => {
    const result = estimate([candidate('a/cached')], { textBytes: 992, images: 0, messages: 1 }, 10)
    expect(result.holdNano).toBe(1_000 * 1_250 + 10 * 2_000)
    // Where a write costs no more than plain input, plain input sets the hold.
    expect(
      estimate([candidate('a/cheap')], { textBytes: 992, images: 0, messages: 1 }, 10).holdNano,
    ).toBe(1_000 * 1_000 + 10 * 2_000)
  })

  test('the tokens-per-minute estimate of a prompt of file data is at most the largest context', () => {
    // A 5 MB PDF as base64: its bytes are no measure of its tokens, and no candidate reads more than 10,000.
    const result = estimate(
      [candidate('a/cheap'), candidate('a/cached')],
      { textBytes: 6_700_000, images: 0, messages: 1 },
      10,
    )
    expect(result.inputTokens).toBe(10_000 + 8)
    expect(result.tokens).toBe(10_000 + 8 + 10)
    expect(result.holdNano).toBe(10_000 * 1_250 + 10 * 2_000)
  })
})
