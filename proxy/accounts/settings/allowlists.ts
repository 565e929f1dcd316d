/**
 * Checks of the lists an operator saves as policy (a key's, a guardrail's or an account's allowed models,
 * an account's allowed providers): exact catalog IDs (chat or image models), no empty list. Access is checked against exact model
 * IDs on the hot path, so an alias here would never match anything.
 */
import { ServiceError } from '../../../shared/errors.ts'
import type { Catalog } from '../../core/catalog/catalog-types.ts'

/** The list without duplicates, or null for "no restriction"; refuses unknown IDs and an empty list. */
export function checkModelIds(
  catalog: Catalog,
  ids: string[] | null,
  param: string,
): string[] | null {
  if (ids === null) return null
  nonEmpty(ids, param, 'model')
  const unknown = ids.filter((id) => !catalog.models.has(id) && !catalog.images.has(id))
  if (unknown.length > 0) {
    const aliases = unknown.filter((id) => catalog.aliases.has(id) || catalog.autos.has(id))
    const hint =
      aliases.length > 0
        ? ' Aliases and automatic choices are not allowed here; list the model IDs they stand for.'
        : ' GET /api/v1/models lists them.'
    throw new ServiceError(
      'invalid_request',
      `${param}: unknown model IDs: ${unknown.join(', ')}.${hint}`,
      { param },
    )
  }
  return [...new Set(ids)]
}

export function checkProviderIds(
  catalog: Catalog,
  ids: string[] | null,
  param: string,
): string[] | null {
  if (ids === null) return null
  nonEmpty(ids, param, 'provider')
  const unknown = ids.filter((id) => !catalog.providers.has(id))
  if (unknown.length > 0) {
    const known = [...catalog.providers.keys()].join(', ')
    throw new ServiceError(
      'invalid_request',
      `${param}: unknown provider IDs: ${unknown.join(', ')}. The catalog has: ${known}.`,
      { param },
    )
  }
  return [...new Set(ids)]
}

// An empty allowlist would refuse every request; saying "no restriction" is null, so [] is most likely a mistake.
function nonEmpty(ids: string[], param: string, what: string): void {
  if (ids.length === 0)
    throw new ServiceError(
      'invalid_request',
      `${param}: list at least one ${what}, or null for no restriction`,
      { param },
    )
}
