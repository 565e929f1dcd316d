/**
 * The shape of `catalog.yaml`: providers (where and how to call them), models (IDs, limits, prices,
 * routes). Unknown fields are refused so that a typo in the file is an error at boot, not a silent default.
 */
import { Type, type Static } from '@sinclair/typebox'
import { TOKENIZERS } from './tokenizers.ts'

const Price = Type.Number({ minimum: 0, description: 'USD per million tokens' })

const ProviderId = Type.String({
  pattern: '^[a-z0-9][a-z0-9-]*$',
  expects: 'lowercase letters, digits and hyphens, such as openai',
})

/** A provider reached over HTTP, with the environment variable that holds its key (none: it takes no key). */
export const CatalogHttpProvider = Type.Object(
  {
    id: ProviderId,
    style: Type.Union([Type.Literal('openai'), Type.Literal('anthropic')]),
    baseUrl: Type.String({ pattern: '^https?://', expects: 'an http:// or https:// URL' }),
    apiKeyEnv: Type.Optional(
      Type.String({
        pattern: '^[A-Z_][A-Z0-9_]*$',
        expects: 'an environment variable name in capitals, such as OPENAI_API_KEY',
      }),
    ),
  },
  { additionalProperties: false },
)

/** A provider built into the gateway (`echo`: the demo model's), needing no key and no network. */
export const CatalogBuiltinProvider = Type.Object(
  { id: ProviderId, style: Type.Literal('openai'), builtin: Type.Literal('echo') },
  { additionalProperties: false },
)

export const CatalogProvider = Type.Union([CatalogHttpProvider, CatalogBuiltinProvider])
export type CatalogProvider = Static<typeof CatalogProvider>

/** A provider and its own name for the model. */
export const CatalogRoute = Type.Object(
  { provider: Type.String(), model: Type.String({ minLength: 1 }) },
  { additionalProperties: false },
)

/** The largest context or output a catalog model may declare: 100 million tokens. */
const MAX_MODEL_TOKENS = 100_000_000

const ModelId = '^[a-z0-9][a-z0-9._-]*/[a-z0-9][a-z0-9._:-]*$'
const modelId = {
  pattern: ModelId,
  expects:
    'author/model in lowercase letters, digits, dots, hyphens and underscores, such as openai/gpt-4o-mini',
}

export const CatalogModel = Type.Object(
  {
    id: Type.String(modelId),
    name: Type.Optional(Type.String()),
    // Bounded so that one request's tokens fit the records' integer columns (below 2^31).
    contextLength: Type.Integer({ minimum: 1, maximum: MAX_MODEL_TOKENS }),
    maxOutputTokens: Type.Integer({ minimum: 1, maximum: MAX_MODEL_TOKENS }),
    pricing: Type.Object(
      {
        inputPerMTok: Price,
        outputPerMTok: Price,
        cachedInputPerMTok: Type.Optional(Price),
        cacheWritePerMTok: Type.Optional(Price),
        /** Prompt-cache writes kept an hour (Anthropic's `ttl: "1h"`); cacheWritePerMTok when unset. */
        cacheWrite1hPerMTok: Type.Optional(Price),
        /** USD per thousand web searches the provider runs itself (Anthropic's web search tool). */
        webSearchPerThousand: Type.Optional(Price),
      },
      { additionalProperties: false },
    ),
    routes: Type.Array(CatalogRoute, { minItems: 1 }),
    /** Free models cost nothing and draw on the account's free allowance. */
    free: Type.Optional(Type.Boolean()),
    /**
     * The model family's own tokenizer, when one is public: streamed output is then counted exactly
     * (the stop at the hold). Without it, each streamed delta counts as at least one token.
     */
    tokenizer: Type.Optional(Type.Union(TOKENIZERS.map((name) => Type.Literal(name)))),
    /**
     * What the model accepts beyond text (tools and images default to true). `reasoning`: whether it
     * takes a reasoning effort (`reasoning_effort`); unsaid, a client's effort is sent as it came.
     */
    capabilities: Type.Optional(
      Type.Object(
        {
          tools: Type.Optional(Type.Boolean()),
          images: Type.Optional(Type.Boolean()),
          reasoning: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
)
export type CatalogModel = Static<typeof CatalogModel>

/** Another name for a model; the target may itself be an alias (at most three steps). */
export const CatalogAlias = Type.Object(
  { id: Type.String(modelId), target: Type.String() },
  { additionalProperties: false },
)

/** An automatic choice (`service/auto`, `service/auto:<variant>`): the first usable candidate answers. */
export const CatalogAuto = Type.Object(
  {
    id: Type.String({
      pattern: '^service/auto(:[a-z0-9-]+)?$',
      expects: 'service/auto or service/auto:<variant>',
    }),
    candidates: Type.Array(Type.String(), { minItems: 1 }),
    /** Auto Free: free candidates only, drawing on the free allowance; its refusals never reach a paid model. */
    free: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)

/** An image model: USD per image by "<size>/<quality>" (e.g. "1024x1024/standard"). */
export const CatalogImageModel = Type.Object(
  {
    id: Type.String(modelId),
    name: Type.Optional(Type.String()),
    routes: Type.Array(CatalogRoute, { minItems: 1 }),
    // A price under a key of another form would be ignored: refused, saying the form.
    prices: Type.Record(Type.String({ pattern: '^\\d+x\\d+/[a-z]+$' }), Price, {
      minProperties: 1,
      additionalProperties: Type.Never({
        expects: 'a price key as <width>x<height>/<quality>, such as 1024x1024/standard',
      }),
    }),
    defaultSize: Type.String(),
    defaultQuality: Type.String(),
  },
  { additionalProperties: false },
)
export type CatalogImageModel = Static<typeof CatalogImageModel>

export const CatalogFile = Type.Object(
  {
    providers: Type.Array(CatalogProvider, { minItems: 1 }),
    models: Type.Array(CatalogModel, { minItems: 1 }),
    aliases: Type.Optional(Type.Array(CatalogAlias)),
    auto: Type.Optional(Type.Array(CatalogAuto)),
    images: Type.Optional(Type.Array(CatalogImageModel)),
  },
  { additionalProperties: false },
)
export type CatalogFile = Static<typeof CatalogFile>
