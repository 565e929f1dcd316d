/**
 * Stage 4: which models may answer. The requested model ID and the fallbacks (`models`) are looked up
 * in the catalog and checked against the key's allowed models, all in memory. A bare model name gets a
 * 404 with the full ID when the catalog has exactly one match.
 */
import { ServiceError } from '../../shared/errors.ts'
import type { Catalog } from '../catalog/catalog.ts'
import type { KeyRecord } from '../keys/key-record.ts'
import type { Candidate } from './call.ts'

export type ResolveResult = { ok: true; candidates: Candidate[] } | { ok: false; error: ServiceError }

export function resolveModels(catalog: Catalog, key: KeyRecord, requested: string, fallbacks: string[] = []): ResolveResult {
  const candidates: Candidate[] = []
  const ids = [requested, ...fallbacks.filter((id) => id !== requested)]
  for (const [index, id] of ids.entries()) {
    const param = index === 0 ? 'model' : `models[${fallbacks.indexOf(id)}]`
    const model = catalog.models.get(id)
    if (!model) return { ok: false, error: unknownModel(catalog, id, param) }
    if (key.allowedModels && !key.allowedModels.has(id)) {
      const allowed = [...key.allowedModels].find((allowedId) => catalog.models.has(allowedId))
      const hint = allowed ? ` This key may call, for example, ${allowed}.` : ''
      return { ok: false, error: new ServiceError('model_not_allowed', `This key is not allowed to use ${id}.${hint}`, { param }) }
    }
    candidates.push({ model, routes: model.routes })
  }
  return { ok: true, candidates }
}

function unknownModel(catalog: Catalog, id: string, param: string): ServiceError {
  let message = `Unknown model: ${id}.`
  if (!id.includes('/')) {
    const matches = [...catalog.models.keys()].filter((known) => known.slice(known.indexOf('/') + 1) === id)
    if (matches.length > 0) message += ` Model IDs have the form <author>/<model>; did you mean ${matches.join(' or ')}?`
    else message += ' Model IDs have the form <author>/<model>.'
  }
  message += ' GET /v1/models lists every model.'
  return new ServiceError('unknown_model', message, { param })
}
