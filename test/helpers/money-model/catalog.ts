/**
 * The catalog of the model-based money test: each model is a behaviour of the fake provider (its name
 * says how it answers) at a price. The gateway's catalog and the model's are built from this one table.
 */
import type { CatalogModel } from '../../../proxy/core/catalog/catalog-schema.ts'
import { anthropicTestModel, testModel } from '../gateway.ts'
import type { Behaviour, ModelSpec, PriceUsd } from './charges.ts'

/** 1,000 nano-USD an input token, 2,000 an output token. */
const cheap: PriceUsd = { inputPerMTok: 1, outputPerMTok: 2 }
/** 1.5 and 3.7 nano-USD a token: costs fall between nanos and are rounded up. */
const odd: PriceUsd = { inputPerMTok: 0.0015, outputPerMTok: 0.0037 }
/** Cache reads and writes at their own prices. */
const caching: PriceUsd = {
  inputPerMTok: 3,
  outputPerMTok: 15,
  cachedInputPerMTok: 0.3,
  cacheWritePerMTok: 3.75,
}

/** The fake provider's model name for a behaviour (its words are single tokens: `vocab=long`). */
export function upstreamName(b: Behaviour): string {
  const options: [string, number | undefined][] = [
    ['tokens', b.tokens],
    ['prompt', b.prompt],
    ['cached', b.cached],
    ['cacheWrite', b.cacheWrite],
    ['status', b.status],
    ['break', b.breakAfter],
    ['errorAfter', b.errorAfter],
    ['stall', b.stall ? 1 : undefined],
    ['dropFirst', b.dropFirst ? 1 : undefined],
    ['chunkDelay', b.chunkDelayMs],
  ]
  const query = options
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name}=${value}`)
  return `fake?${[...query, 'vocab=long'].join('&')}`
}

const openai = (b: Omit<Behaviour, 'provider'>): Behaviour => ({ provider: 'openai', ...b })
const anthropic = (b: Omit<Behaviour, 'provider'>): Behaviour => ({ provider: 'anthropic', ...b })

const table: [string, Behaviour, PriceUsd][] = [
  ['o/ok', openai({ tokens: 12, prompt: 30 }), cheap],
  ['o/big', openai({ tokens: 14, prompt: 35 }), cheap],
  ['o/odd', openai({ tokens: 7, prompt: 13 }), odd],
  ['o/cached', openai({ tokens: 5, prompt: 40, cached: 30 }), caching],
  ['o/long', openai({ tokens: 150, prompt: 10 }), cheap],
  ['o/break-early', openai({ tokens: 40, prompt: 20, breakAfter: 3 }), cheap],
  ['o/break-late', openai({ tokens: 80, prompt: 20, breakAfter: 55 }), cheap],
  // Either side of the spec's 50 output tokens under which a broken stream is written off.
  ['o/break-49', openai({ tokens: 80, prompt: 20, breakAfter: 49 }), cheap],
  ['a/break-50', anthropic({ tokens: 80, prompt: 20, breakAfter: 50 }), cheap],
  ['o/error-late', openai({ tokens: 70, prompt: 15, errorAfter: 52 }), odd],
  ['o/fail', openai({ tokens: 5, prompt: 10, status: 500 }), cheap],
  ['o/limited', openai({ tokens: 5, prompt: 10, status: 429 }), cheap],
  ['o/drop', openai({ tokens: 8, prompt: 12, dropFirst: true }), cheap],
  ['o/stall', openai({ tokens: 6, prompt: 20, stall: true }), cheap],
  ['o/slow', openai({ tokens: 24, prompt: 20, chunkDelayMs: 60 }), cheap],
  ['a/ok', anthropic({ tokens: 9, prompt: 25 }), cheap],
  ['a/big', anthropic({ tokens: 11, prompt: 28 }), cheap],
  ['a/cached', anthropic({ tokens: 6, prompt: 50, cached: 20, cacheWrite: 10 }), caching],
  ['a/long', anthropic({ tokens: 150, prompt: 10 }), cheap],
  ['a/break-early', anthropic({ tokens: 40, prompt: 22, breakAfter: 2 }), cheap],
  ['a/break-late', anthropic({ tokens: 90, prompt: 22, breakAfter: 60 }), odd],
  ['a/error-early', anthropic({ tokens: 30, prompt: 18, errorAfter: 4 }), cheap],
  ['a/fail', anthropic({ tokens: 5, prompt: 10, status: 529 }), cheap],
  ['a/stall', anthropic({ tokens: 6, prompt: 20, stall: true }), cheap],
  ['a/slow', anthropic({ tokens: 24, prompt: 20, chunkDelayMs: 60 }), cheap],
]

/** The `big` models allow long outputs: holds up to the whole balance. */
export const modelSpecs: ModelSpec[] = table.map(([id, behaviour, pricing]) => ({
  id,
  behaviour,
  pricing,
  contextLength: id.endsWith('/big') ? 300_000 : 100_000,
  maxOutputTokens: id.endsWith('/big') ? 200_000 : 1_000,
}))

export const specById = new Map(modelSpecs.map((spec) => [spec.id, spec]))

/** The same models in the gateway's catalog. */
export function catalogModels(): CatalogModel[] {
  return modelSpecs.map((spec) => {
    const make = spec.behaviour.provider === 'openai' ? testModel : anthropicTestModel
    return make(spec.id, upstreamName(spec.behaviour), {
      pricing: spec.pricing,
      contextLength: spec.contextLength,
      maxOutputTokens: spec.maxOutputTokens,
    })
  })
}

/** Models a plain request may name: those that answer at once (stalled and slow streams have their own steps). */
export const plainModels = modelSpecs
  .map((spec) => spec.id)
  .filter((id) => !id.endsWith('/stall') && !id.endsWith('/slow'))

/** Models that always answer, for fallbacks and for steps that need an answer. */
export const answeringModels = ['o/ok', 'o/odd', 'o/cached', 'a/ok', 'a/cached']

/** Models whose hold can be made as large as a balance, through the output limit. */
export const bigModels = ['o/big', 'a/big']
