/**
 * The `provider` object of a Chat Completions request: which providers may serve it and in what order.
 *   order            providers to try first, in this order (the others follow in catalog order)
 *   only             providers allowed (every other is skipped)
 *   ignore           providers never used
 *   allow_fallbacks  false: only the providers in `order` are used (default true)
 * Unknown fields and unknown provider IDs are refused by name.
 */
import { ServiceError } from '../../../shared/errors.ts'
import type { Route } from '../../core/catalog/catalog-types.ts'

export type ProviderPrefs = {
  order?: string[]
  only?: ReadonlySet<string>
  ignore?: ReadonlySet<string>
  allowFallbacks: boolean
}

const FIELDS = new Set(['order', 'only', 'ignore', 'allow_fallbacks'])

export function parseProviderPrefs(
  value: Record<string, unknown>,
  providers: ReadonlyMap<string, unknown>,
): ProviderPrefs | ServiceError {
  for (const field of Object.keys(value)) {
    if (!FIELDS.has(field)) {
      return new ServiceError(
        'invalid_request',
        `provider.${field}: unknown field; supported: ${[...FIELDS].join(', ')}`,
        { param: `provider.${field}` },
      )
    }
  }
  const prefs: ProviderPrefs = { allowFallbacks: true }
  for (const field of ['order', 'only', 'ignore'] as const) {
    const list = value[field]
    if (list === undefined || list === null) continue
    if (!Array.isArray(list) || list.length > 32)
      return invalid(field, 'must be an array of at most 32 provider IDs')
    for (const [index, id] of list.entries()) {
      if (typeof id !== 'string') return invalid(`${field}[${index}]`, 'must be a provider ID')
      if (!providers.has(id))
        return invalid(
          `${field}[${index}]`,
          `unknown provider "${id}"; known: ${[...providers.keys()].join(', ')}`,
        )
    }
    if (field === 'order') prefs.order = list
    else prefs[field] = new Set(list)
  }
  const allow = value.allow_fallbacks
  if (allow !== undefined && allow !== null) {
    if (typeof allow !== 'boolean') return invalid('allow_fallbacks', 'must be a boolean')
    prefs.allowFallbacks = allow
  }
  return prefs
}

/** The routes the preferences allow, in the order they ask for. */
export function preferredRoutes(routes: Route[], prefs: ProviderPrefs): Route[] {
  let allowed = routes.filter(
    (route) =>
      (!prefs.only || prefs.only.has(route.provider.id)) && !prefs.ignore?.has(route.provider.id),
  )
  const order = prefs.order
  if (!order) return allowed
  if (!prefs.allowFallbacks) allowed = allowed.filter((route) => order.includes(route.provider.id))
  const rank = (route: Route) => {
    const at = order.indexOf(route.provider.id)
    return at < 0 ? order.length : at
  }
  // A stable sort keeps catalog order among equals.
  return allowed.toSorted((a, b) => rank(a) - rank(b))
}

function invalid(field: string, message: string): ServiceError {
  return new ServiceError('invalid_request', `provider.${field}: ${message}`, {
    param: `provider.${field}`,
  })
}
