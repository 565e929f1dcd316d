/**
 * Which image model and routes an image request gets, all in memory: the catalog's image model (a chat
 * model ID is named as such; a bare name gets the full ID suggested), the key's access to it (key,
 * guardrail and account allowlists), and the routes whose provider has a key and that the account's
 * provider restrictions allow, in catalog order.
 */
import { ServiceError } from '../../../shared/errors.ts'
import type { Catalog, Route } from '../../core/catalog/catalog-types.ts'
import type { ImageModel } from '../../core/catalog/catalog-types.ts'
import type { KeyRecord } from '../../core/key-record.ts'
import { mayUse, notAllowed } from './access.ts'
import { bareNameMatches, fullIdHint } from '../../core/catalog/model-names.ts'

export function resolveImageModel(
  catalog: Catalog,
  key: KeyRecord,
  id: string,
): ImageModel | ServiceError {
  const model = catalog.images.get(id)
  const imageIds = [...catalog.images.keys()]
  if (!model) {
    if (
      catalog.models.has(id) ||
      catalog.aliases.has(id) ||
      catalog.autos.has(id) ||
      id.startsWith('@preset/')
    ) {
      return new ServiceError(
        'invalid_request',
        `model: ${id} is not an image model; image models: ${imageIds.join(', ')}.`,
        { param: 'model' },
      )
    }
    const matches = bareNameMatches(id, imageIds)
    const hint =
      matches.length > 0 ? fullIdHint(id, matches) : ` Image models: ${imageIds.join(', ')}.`
    return new ServiceError('unknown_model', `Unknown image model: ${id}.${hint}`, {
      param: 'model',
    })
  }
  if (!mayUse(key, id)) return notAllowed(key, id, imageIds, 'model', undefined, 'image model')
  return model
}

/** No keyed route: 503 `images_unavailable`, nothing held; keyed routes all restricted: 503 `no_available_route`. */
export function usableImageRoutes(model: ImageModel, key: KeyRecord): Route[] | ServiceError {
  const keyed = model.routes.filter((route) => route.provider.available)
  if (keyed.length === 0) {
    return new ServiceError(
      'images_unavailable',
      `Image requests for ${model.id} are unavailable: no provider is configured for it. Nothing was sent or charged.`,
    )
  }
  const allowed = keyed.filter(
    (route) => !key.accountProviders || key.accountProviders.has(route.provider.id),
  )
  if (allowed.length === 0) {
    return new ServiceError(
      'no_available_route',
      `No provider route for ${model.id} is allowed by the account's provider restrictions.`,
    )
  }
  return allowed
}
