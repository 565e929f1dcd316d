/**
 * The shape of `catalog.yaml`: providers (where and how to call them), models (IDs, limits, prices,
 * routes). Unknown fields are refused so that a typo in the file is an error at boot, not a silent default.
 */
import { Type, type Static } from '@sinclair/typebox'

const Price = Type.Number({ minimum: 0, description: 'USD per million tokens' })

export const CatalogProvider = Type.Object(
  {
    id: Type.String({ pattern: '^[a-z0-9][a-z0-9-]*$' }),
    style: Type.Union([Type.Literal('openai'), Type.Literal('anthropic')]),
    baseUrl: Type.String({ pattern: '^https?://' }),
    apiKeyEnv: Type.String({ pattern: '^[A-Z_][A-Z0-9_]*$' }),
  },
  { additionalProperties: false },
)
export type CatalogProvider = Static<typeof CatalogProvider>

export const CatalogRoute = Type.Object(
  { provider: Type.String(), model: Type.String({ minLength: 1 }) },
  { additionalProperties: false },
)

export const CatalogModel = Type.Object(
  {
    id: Type.String({ pattern: '^[a-z0-9][a-z0-9._-]*/[a-z0-9][a-z0-9._:-]*$' }),
    name: Type.Optional(Type.String()),
    contextLength: Type.Integer({ minimum: 1 }),
    maxOutputTokens: Type.Integer({ minimum: 1 }),
    pricing: Type.Object(
      { inputPerMTok: Price, outputPerMTok: Price, cachedInputPerMTok: Type.Optional(Price), cacheWritePerMTok: Type.Optional(Price) },
      { additionalProperties: false },
    ),
    routes: Type.Array(CatalogRoute, { minItems: 1 }),
    free: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)
export type CatalogModel = Static<typeof CatalogModel>

export const CatalogFile = Type.Object(
  {
    providers: Type.Array(CatalogProvider, { minItems: 1 }),
    models: Type.Array(CatalogModel, { minItems: 1 }),
  },
  { additionalProperties: false },
)
export type CatalogFile = Static<typeof CatalogFile>
