/**
 * The model catalog on the API server, mounted under /v1 and /api/v1 and read with a key: the listing
 * (`GET /models`, the SDKs' `models.list()`) with the account's presets after the models, and one entry
 * (`GET /models/{id}`, the SDKs' `models.retrieve()`), the same object as that model's item of the
 * listing. SDKs send the ID's slash encoded (`author%2Fmodel`); the literal form works too. Messages-style
 * clients (those sending `anthropic-version`) get errors in the Messages shape with `request-id`, and may
 * use `x-api-key`.
 */
import { Elysia } from 'elysia'
import { ServiceError } from '../../shared/errors.ts'
import { choiceEntry, listing } from '../core/catalog/catalog-listing.ts'
import { bareNameMatches, fullIdHint } from '../core/catalog/model-names.ts'
import type { KeyRecord } from '../core/key-record.ts'
import { keyEndpoint, type JsonAnswer } from '../pipeline/endpoint.ts'
import type { Gateway } from '../pipeline/gateway.ts'
import { chatErrorBody } from '../pipeline/styles/chat/render-error.ts'
import { messagesErrorBody } from '../pipeline/styles/messages/render-error.ts'
import { messagesStyle } from '../pipeline/styles/messages/style.ts'
import { readCatalog } from '../policy/catalog-reads.ts'
import { PRESET_PREFIX } from '../policy/routing/presets.ts'
import { clientAddress, type AddressTrust } from './client-address.ts'

export function catalogRoutes(gw: Gateway, trust: AddressTrust) {
  return new Elysia()
    .get('/models', ({ request, server }) =>
      catalogEndpoint(gw, request, () => clientAddress(server, request, trust), {
        listing: (catalog) => ({ body: catalog }),
      }),
    )
    .get('/models/*', ({ request, params, server }) =>
      catalogEndpoint(gw, request, () => clientAddress(server, request, trust), {
        listing: (catalog) => {
          const id = modelIdFromPath(params['*'])
          const entry = listedModel(catalog, id)
          if (!entry) throw unknownListedModel(catalog, id, '/v1/models')
          return { body: entry }
        },
      }),
    )
}

/** A catalog read with the request's key; `answer` picks from the listing (presets included). */
function catalogEndpoint(
  gw: Gateway,
  request: Request,
  address: () => string,
  read: { listing: (catalog: Record<string, unknown>) => JsonAnswer },
): Promise<Response> {
  const messagesClient = request.headers.has('anthropic-version')
  const render = (requestId: string) =>
    messagesClient ? (error: ServiceError) => messagesErrorBody(error, requestId) : chatErrorBody
  return keyEndpoint(
    gw,
    request,
    {
      style: 'models',
      render,
      address,
      allowXApiKey: messagesClient,
      headers: messagesClient ? messagesStyle.headers : undefined,
    },
    async (key) => {
      const catalog = await readCatalog(gw.catalogReads, address())
      if (catalog instanceof ServiceError) throw catalog
      return read.listing(withPresets(catalog, key.presets))
    },
  )
}

/** The catalog with the account's presets after the models. */
function withPresets(
  catalog: Record<string, unknown>,
  presets: KeyRecord['presets'],
): Record<string, unknown> {
  if (presets.size === 0) return catalog
  const now = new Date()
  const entries = [...presets.values()].map((preset) => ({
    ...choiceEntry(
      `${PRESET_PREFIX}${preset.slug}`,
      Math.floor(now.getTime() / 1000),
      now.toISOString(),
    ),
    preset: { model: preset.model, fallbacks: preset.fallbacks },
  }))
  return listing([...(catalog.data as Record<string, unknown>[]), ...entries])
}

/** The model ID of a `/models/{id}` path: percent-decoded, so `author%2Fmodel` and `author/model` are one. */
export function modelIdFromPath(path: string): string {
  try {
    return decodeURIComponent(path)
  } catch {
    return path
  }
}

/** The listing's item for `id`, if it lists one. */
export function listedModel(
  catalog: Record<string, unknown>,
  id: string,
): Record<string, unknown> | undefined {
  return (catalog.data as Record<string, unknown>[]).find((entry) => entry.id === id)
}

/** 404 `unknown_model`; a bare model name is answered with the full IDs that end in it. */
export function unknownListedModel(
  catalog: Record<string, unknown>,
  id: string,
  listPath: string,
): ServiceError {
  const listed = (catalog.data as { id: string }[]).map((entry) => entry.id)
  const hint = fullIdHint(id, bareNameMatches(id, listed))
  return new ServiceError(
    'unknown_model',
    `Unknown model: ${id}.${hint} GET ${listPath} lists every model.`,
    {
      param: 'model',
    },
  )
}
