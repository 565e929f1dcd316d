/**
 * Presets for operators: save (create or replace), list and delete an account's `@preset/<slug>`. The
 * model and fallbacks are checked against the catalog and the account's routing restrictions when saved,
 * so a preset cannot point at a model the gateway does not know or the account's keys may not call.
 * Presets load with the key record: every change invalidates the account's cached keys on every process.
 */
import { Type } from '@sinclair/typebox'
import { PresetParams } from '../../../shared/schemas/admin/policy.ts'
import {
  fallbackLabel,
  PRESET_LABELS,
  PRESET_SLUG_PATTERN,
} from '../../../shared/schemas/admin/field-rules.ts'
import { ServiceError } from '../../../shared/errors.ts'
import type { OperatorDeps } from '../operator-deps.ts'
import type { Catalog } from '../../core/catalog/catalog-types.ts'
import { resolveAlias } from '../../core/catalog/catalog-choices.ts'
import { envelope, validate } from '../../pipeline/validate.ts'
import { isPresetId, PRESET_PREFIX } from '../../policy/routing/presets.ts'
import { MAX_CANDIDATES } from '../../policy/routing/resolve.ts'

export const PRESET_SLUG = new RegExp(PRESET_SLUG_PATTERN)

const paramsCheck = envelope<{ params: PresetParams }>(
  Type.Object({ params: PresetParams }),
  new Set(['params']),
)

export type PresetInput = { model: string; fallbacks?: string[]; params?: PresetParams }

export type PresetView = {
  accountId: string
  slug: string
  /** What a client sends as `model`. */
  id: string
  model: string
  fallbacks: string[]
  params: PresetParams
  createdAt: string
  updatedAt: string
}

type Row = {
  account_id: string
  slug: string
  model: string
  fallbacks: string[]
  params: PresetParams
  created_at: Date
  updated_at: Date
}

/** Creates or replaces a preset; `created` says which. */
export async function savePreset(
  deps: OperatorDeps,
  accountId: string,
  slug: string,
  input: PresetInput,
): Promise<{ preset: PresetView; created: boolean }> {
  if (!PRESET_SLUG.test(slug)) {
    throw new ServiceError(
      'invalid_request',
      `${PRESET_LABELS.slug} "${slug}" is not a preset slug: use 1 to 63 lowercase letters, digits and hyphens, not starting with a hyphen.`,
      { param: 'slug' },
    )
  }
  const fallbacks = input.fallbacks ?? []
  const params = input.params ?? {}
  checkChoices(deps.catalog, input.model, fallbacks)
  const checked = validate({ params }, paramsCheck)
  if (!checked.ok) throw checked.error
  const [account] = await deps.sql<{ allowed_models: string[] | null }[]>`
    SELECT allowed_models FROM accounts WHERE id = ${accountId}`
  if (!account) throw new ServiceError('not_found', `No account ${accountId}.`)
  if (account.allowed_models)
    checkRouting(deps.catalog, new Set(account.allowed_models), input.model, fallbacks)
  const [row] = await deps.sql<(Row & { created: boolean })[]>`
    INSERT INTO presets (account_id, slug, model, fallbacks, params)
    VALUES (${accountId}, ${slug}, ${input.model}, ${fallbacks}, ${deps.sql.json(params)})
    ON CONFLICT (account_id, slug) DO UPDATE
      SET model = excluded.model, fallbacks = excluded.fallbacks, params = excluded.params, updated_at = now()
    RETURNING *, (xmax = 0) AS created`
  await deps.keys.invalidate({ accountId })
  return { preset: view(row!), created: row!.created }
}

export async function listPresets(
  deps: OperatorDeps,
  accountId: string,
): Promise<{ presets: PresetView[] }> {
  await requireAccount(deps, accountId)
  const rows = await deps.sql<
    Row[]
  >`SELECT * FROM presets WHERE account_id = ${accountId} ORDER BY slug`
  return { presets: rows.map(view) }
}

export async function deletePreset(
  deps: OperatorDeps,
  accountId: string,
  slug: string,
): Promise<{ accountId: string; slug: string; deleted: true }> {
  const [row] =
    await deps.sql`DELETE FROM presets WHERE account_id = ${accountId} AND slug = ${slug} RETURNING slug`
  if (!row)
    throw new ServiceError(
      'not_found',
      `No preset ${PRESET_PREFIX}${slug} in account ${accountId}.`,
    )
  await deps.keys.invalidate({ accountId })
  return { accountId, slug, deleted: true }
}

/**
 * The model and fallbacks must be what a request could name itself: a catalog model, an alias or an
 * automatic choice; not a preset (resolving one preset through another could loop). Auto Free never falls
 * back to a paid model, so its fallbacks must be free too (the request would be refused otherwise).
 */
function checkChoices(catalog: Catalog, model: string, fallbacks: string[]): void {
  checkChoice(catalog, model, 'model', PRESET_LABELS.model)
  if (fallbacks.length > MAX_CANDIDATES - 1) {
    throw new ServiceError(
      'invalid_request',
      `${PRESET_LABELS.fallbacks}: at most ${MAX_CANDIDATES - 1}.`,
      { param: 'fallbacks' },
    )
  }
  fallbacks.forEach((fallback, index) =>
    checkChoice(catalog, fallback, `fallbacks[${index}]`, fallbackLabel(index)),
  )
  if (catalog.autos.get(model)?.free) {
    fallbacks.forEach((fallback, index) => {
      const free = catalog.models.get(fallback)?.free ?? catalog.autos.get(fallback)?.free ?? false
      if (!free) {
        throw new ServiceError(
          'invalid_request',
          `${fallbackLabel(index)}: ${fallback} is not free, and ${model} never falls back to a paid model.`,
          { param: `fallbacks[${index}]` },
        )
      }
    })
  }
}

/**
 * Every choice must be one the account's routing allows: otherwise each call of the preset is refused
 * 403 model_not_allowed. An alias counts as the model it leads to now, an automatic choice as allowed
 * when one of its candidates is.
 */
function checkRouting(
  catalog: Catalog,
  allowed: ReadonlySet<string>,
  model: string,
  fallbacks: string[],
): void {
  const check = (id: string, param: string, label: string): void => {
    const auto = catalog.autos.get(id)
    if (auto) {
      if (auto.candidates.some((candidate) => allowed.has(candidate))) return
      throw notRouted(`${label}: none of the models ${id} chooses from is`, param)
    }
    const target = catalog.models.get(id) ?? resolveAlias(catalog.aliases, catalog.models, id)
    if (!target || allowed.has(target.id)) return
    const named = target.id === id ? id : `${id} (an alias of ${target.id})`
    throw notRouted(`${label}: ${named} is not`, param)
  }
  check(model, 'model', PRESET_LABELS.model)
  fallbacks.forEach((fallback, index) =>
    check(fallback, `fallbacks[${index}]`, fallbackLabel(index)),
  )
}

function notRouted(what: string, param: string): ServiceError {
  return new ServiceError(
    'invalid_request',
    `${what} allowed by the account's routing restrictions, so every call of the preset would be refused. Allow it on the Routing page, or choose another model.`,
    { param },
  )
}

/** `label` is how the dashboard's preset form names the field. */
function checkChoice(catalog: Catalog, id: string, param: string, label: string): void {
  if (catalog.models.has(id) || catalog.aliases.has(id) || catalog.autos.has(id)) return
  const why = isPresetId(id)
    ? 'is a preset; a preset cannot name another preset'
    : 'is not a catalog model ID, alias or service/auto choice'
  throw new ServiceError('invalid_request', `${label}: ${id} ${why}.`, { param })
}

async function requireAccount(deps: OperatorDeps, accountId: string): Promise<void> {
  const [account] = await deps.sql`SELECT 1 FROM accounts WHERE id = ${accountId}`
  if (!account) throw new ServiceError('not_found', `No account ${accountId}.`)
}

function view(row: Row): PresetView {
  return {
    accountId: row.account_id,
    slug: row.slug,
    id: `${PRESET_PREFIX}${row.slug}`,
    model: row.model,
    fallbacks: row.fallbacks,
    params: row.params,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  }
}
