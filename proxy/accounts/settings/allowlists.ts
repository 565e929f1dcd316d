/**
 * Checks of the lists an operator saves as policy (a key's, a guardrail's or an account's allowed models,
 * an account's allowed providers): exact catalog IDs (chat or image models), no empty list. Access is
 * checked against exact model IDs on the hot path, so an alias here would never match anything. A
 * refusal names the list by the label the dashboard shows for it; `param` is the field in the request.
 */
import { ServiceError } from '../../../shared/errors.ts'
import { ALLOWLIST_LABELS } from '../../../shared/schemas/admin/field-rules.ts'
import type { Catalog } from '../../core/catalog/catalog-types.ts'

/** The list without duplicates, or null for "no restriction"; refuses unknown IDs and an empty list. */
export function checkModelIds(
  catalog: Catalog,
  ids: string[] | null,
  param: string,
): string[] | null {
  if (ids === null) return null
  nonEmpty(ids, param, ALLOWLIST_LABELS.models, 'model')
  const unknown = ids.filter((id) => !catalog.models.has(id) && !catalog.images.has(id))
  if (unknown.length > 0) {
    const aliases = unknown.filter((id) => catalog.aliases.has(id) || catalog.autos.has(id))
    const hint =
      aliases.length > 0
        ? ' Aliases and automatic choices are not allowed here; list the model IDs they stand for.'
        : ' GET /api/v1/models lists them.'
    throw new ServiceError(
      'invalid_request',
      `${ALLOWLIST_LABELS.models}: unknown model IDs: ${unknown.join(', ')}.${hint}`,
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
  nonEmpty(ids, param, ALLOWLIST_LABELS.providers, 'provider')
  const unknown = ids.filter((id) => !catalog.providers.has(id))
  if (unknown.length > 0) {
    const known = [...catalog.providers.keys()].join(', ')
    throw new ServiceError(
      'invalid_request',
      `${ALLOWLIST_LABELS.providers}: unknown provider IDs: ${unknown.join(', ')}. The catalog has: ${known}.`,
      { param },
    )
  }
  return [...new Set(ids)]
}

// An empty allowlist would refuse every request; saying "no restriction" is null, so [] is most likely a mistake.
function nonEmpty(ids: string[], param: string, label: string, what: string): void {
  if (ids.length === 0)
    throw new ServiceError(
      'invalid_request',
      `${label}: list at least one ${what}, or none (null) for no restriction.`,
      { param },
    )
}
