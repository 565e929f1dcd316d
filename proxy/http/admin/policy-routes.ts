/**
 * The account's policy in the dashboard: presets, guardrails, routing restrictions and account-level limits, through the same
 * functions as the operator API (so checks, messages and key-cache invalidation are the same). Reads for
 * any member, changes for owner and admins; always the session's own account (another account's
 * guardrail is 404; presets are addressed within the account by slug). The preset list carries the API
 * server's address for code samples; `GET /routing/providers` lists the providers a restriction may name.
 */
import { Elysia, t } from 'elysia'
import {
  AccountLimits,
  AccountLimitsChanges,
  Guardrail,
  GuardrailChanges,
  GuardrailDeleted,
  Guardrails,
  NewGuardrail,
  PresetBody,
  Preset,
  PresetDeleted,
  Presets,
  Routing,
  RoutingChanges,
  RoutingProviders,
} from '../../../shared/schemas/admin/policy.ts'
import { ServiceError } from '../../../shared/errors.ts'
import { GUARDRAIL_LABELS, nothingToChange } from '../../../shared/schemas/admin/field-rules.ts'
import {
  createGuardrail,
  deleteGuardrail,
  listGuardrails,
  updateGuardrail,
} from '../../accounts/settings/guardrails.ts'
import { deletePreset, listPresets, savePreset } from '../../accounts/settings/presets.ts'
import { readLimits, setLimits } from '../../accounts/settings/limits.ts'
import { setRouting } from '../../accounts/settings/routing.ts'
import type { AdminDeps } from './admin-deps.ts'
import { requireSession } from './admin-session.ts'

export function policyRoutes(deps: AdminDeps) {
  return new Elysia()
    .get(
      '/presets',
      async ({ request }) => {
        const session = await requireSession(deps, request, 'read')
        return { ...(await listPresets(deps, session.accountId)), baseUrl: apiBase(deps, request) }
      },
      {
        response: Presets,
        detail: {
          summary:
            "The account's presets, called as @preset/<slug>, and the API address clients call them at",
        },
      },
    )
    .put(
      '/presets/:slug',
      async ({ request, params, body, set }) => {
        const session = await requireSession(deps, request, 'manage')
        const saved = await savePreset(deps, session.accountId, params.slug, body)
        set.status = saved.created ? 201 : 200
        return saved.preset
      },
      {
        params: t.Object({ slug: t.String() }),
        body: PresetBody,
        response: { 200: Preset, 201: Preset },
        detail: { summary: 'Create (201) or replace (200) a preset' },
      },
    )
    .delete(
      '/presets/:slug',
      async ({ request, params }) =>
        deletePreset(deps, (await requireSession(deps, request, 'manage')).accountId, params.slug),
      {
        params: t.Object({ slug: t.String() }),
        response: PresetDeleted,
        detail: { summary: 'Delete a preset' },
      },
    )
    .get(
      '/guardrails',
      async ({ request }) =>
        listGuardrails(deps, (await requireSession(deps, request, 'read')).accountId),
      {
        response: Guardrails,
        detail: { summary: "The account's guardrails with the keys they are assigned to" },
      },
    )
    .post(
      '/guardrails',
      async ({ request, body, set }) => {
        const session = await requireSession(deps, request, 'manage')
        const created = await createGuardrail(deps, session.accountId, body)
        set.status = 201
        return created
      },
      {
        body: NewGuardrail,
        response: { 201: Guardrail },
        detail: { summary: 'Create a guardrail (assign it to keys with their guardrailId)' },
      },
    )
    .patch(
      '/guardrails/:id',
      async ({ request, params, body }) => {
        const session = await requireSession(deps, request, 'manage')
        await requireGuardrail(deps, session.accountId, params.id)
        if (Object.keys(body).length === 0)
          throw new ServiceError(
            'invalid_request',
            nothingToChange(Object.values(GUARDRAIL_LABELS)),
          )
        return updateGuardrail(deps, params.id, body)
      },
      {
        params: t.Object({ id: t.String() }),
        body: GuardrailChanges,
        response: Guardrail,
        detail: { summary: "Change a guardrail's name, models, budget or filters" },
      },
    )
    .delete(
      '/guardrails/:id',
      async ({ request, params }) => {
        const session = await requireSession(deps, request, 'manage')
        await requireGuardrail(deps, session.accountId, params.id)
        return deleteGuardrail(deps, params.id)
      },
      {
        params: t.Object({ id: t.String() }),
        response: GuardrailDeleted,
        detail: { summary: 'Delete a guardrail; its keys keep working without it' },
      },
    )
    .get(
      '/routing',
      async ({ request }) =>
        readRouting(deps, (await requireSession(deps, request, 'read')).accountId),
      {
        response: Routing,
        detail: {
          summary: "The account's routing restrictions: allowed models and providers (null: any)",
        },
      },
    )
    .get(
      '/routing/providers',
      async ({ request }) => {
        await requireSession(deps, request, 'read')
        return catalogProviders(deps)
      },
      {
        response: RoutingProviders,
        detail: {
          summary: 'The providers a routing restriction may name, with the models each can serve',
        },
      },
    )
    .put(
      '/routing',
      async ({ request, body }) =>
        setRouting(deps, (await requireSession(deps, request, 'manage')).accountId, body),
      {
        body: RoutingChanges,
        response: Routing,
        detail: {
          summary: 'Change the routing restrictions; a list left out stays, null removes it',
        },
      },
    )
    .get(
      '/account/limits',
      async ({ request }) =>
        readLimits(deps, (await requireSession(deps, request, 'read')).accountId),
      {
        response: AccountLimits,
        detail: {
          summary:
            "The account's own limits shared by its keys (rpm, tpm, concurrency; null: the default) and those in force",
        },
      },
    )
    .patch(
      '/account/limits',
      async ({ request, body }) =>
        setLimits(deps, (await requireSession(deps, request, 'manage')).accountId, body),
      {
        body: AccountLimitsChanges,
        response: AccountLimits,
        detail: {
          summary:
            "Change the account's limits; one left out stays, null returns it to the default, 0 is no limit",
        },
      },
    )
}

async function requireGuardrail(
  deps: AdminDeps,
  accountId: string,
  guardrailId: string,
): Promise<void> {
  const [row] =
    await deps.sql`SELECT 1 FROM guardrails WHERE id = ${guardrailId} AND account_id = ${accountId}`
  if (!row) throw new ServiceError('not_found', `No guardrail ${guardrailId} in this account.`)
}

async function readRouting(deps: AdminDeps, accountId: string): Promise<Routing> {
  const [row] = await deps.sql<
    { allowed_models: string[] | null; allowed_providers: string[] | null }[]
  >`
    SELECT allowed_models, allowed_providers FROM accounts WHERE id = ${accountId}`
  if (!row) throw new ServiceError('not_found', `No account ${accountId}.`)
  return { accountId, models: row.allowed_models, providers: row.allowed_providers }
}

function catalogProviders(deps: AdminDeps): RoutingProviders {
  const served = new Map<string, string[]>([...deps.catalog.providers.keys()].map((id) => [id, []]))
  for (const model of [...deps.catalog.models.values(), ...deps.catalog.images.values()]) {
    for (const providerId of new Set(model.routes.map((route) => route.provider.id)))
      served.get(providerId)?.push(model.id)
  }
  return { providers: [...served].map(([id, models]) => ({ id, models })) }
}

/**
 * The API server's public address: PUBLIC_API_URL when set, else this request's host on the port the
 * API server bound (both servers bind the same HOST; with PORT=0 it is the one picked). Behind a proxy,
 * set PUBLIC_API_URL.
 */
function apiBase(deps: AdminDeps, request: Request): string {
  if (deps.config.PUBLIC_API_URL) return deps.config.PUBLIC_API_URL.replace(/\/+$/, '')
  const url = new URL(request.url)
  return `${url.protocol}//${url.hostname}:${deps.apiPort()}`
}
