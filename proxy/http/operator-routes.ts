/**
 * The operator API on the site server (/operator/v1), behind the operator token: what `bun run admin`
 * calls. Accounts, credits, suspension and keys; an account's presets, routing restrictions and
 * guardrails; provider pauses; support tickets (support-operator-routes.ts). Bodies are the shared
 * schemas (the admin API's for keys and policy), checked with TypeBox and refused naming the field; money
 * is integer nano-USD both ways, with a decimal USD string beside it in answers.
 */
import type { TSchema } from '@sinclair/typebox'
import { openapi } from '@elysiajs/openapi'
import { Elysia } from 'elysia'
import { ServiceError } from '../../shared/errors.ts'
import { ApiKeyChanges } from '../../shared/schemas/admin/keys.ts'
import {
  Credit,
  NewAccount,
  NewAccountKey,
  ProviderPause,
  Suspension,
} from '../../shared/schemas/admin/operator.ts'
import { ReplacedLink, RevokedLink } from '../../shared/schemas/admin/setup.ts'
import {
  AccountLimits,
  AccountLimitsChanges,
  GuardrailChanges,
  NewGuardrail,
  PresetBody,
  RoutingChanges,
} from '../../shared/schemas/admin/policy.ts'
import { createAccount, creditAccount, showAccount } from '../accounts/accounts.ts'
import { replaceLink, revokeLink } from '../accounts/people/accountless.ts'
import { dashboardLink, siteBase } from '../accounts/people/site-url.ts'
import { createKey, revokeKey, updateKey } from '../accounts/keys.ts'
import { liftSuspension, suspendAccount } from '../accounts/suspension.ts'
import { decideHeld, findPayments } from '../accounts/payments/payments.ts'
import {
  OperatorPayment,
  OperatorPayments,
  PaymentsQuery,
} from '../../shared/schemas/admin/billing.ts'
import { digestsEqual } from '../core/api-key.ts'
import { envelope, validate, type Envelope } from '../pipeline/validate.ts'
import {
  createGuardrail,
  deleteGuardrail,
  listGuardrails,
  updateGuardrail,
} from '../accounts/settings/guardrails.ts'
import { listProviders, pauseProvider, resumeProvider } from '../accounts/settings/pauses.ts'
import { deletePreset, listPresets, savePreset } from '../accounts/settings/presets.ts'
import { readLimits, setLimits } from '../accounts/settings/limits.ts'
import { clearRouting, setRouting } from '../accounts/settings/routing.ts'
import type { AdminDeps } from './admin/admin-deps.ts'
import { supportOperatorRoutes } from './support-operator-routes.ts'

/** A body checked against a shared schema, refused in the gateway's error shape naming the field. */
const bodyOf = <T>(schema: TSchema & { properties: object }) =>
  envelope<T>(
    schema,
    new Set(Object.keys(schema.properties)),
    undefined,
    (field) => `${field}: not a field of this request`,
  )
const envelopes = {
  newAccount: bodyOf<NewAccount>(NewAccount),
  credit: bodyOf<Credit>(Credit),
  newKey: bodyOf<NewAccountKey>(NewAccountKey),
  keyChanges: bodyOf<ApiKeyChanges>(ApiKeyChanges),
  preset: bodyOf<PresetBody>(PresetBody),
  routing: bodyOf<RoutingChanges>(RoutingChanges),
  newGuardrail: bodyOf<NewGuardrail>(NewGuardrail),
  guardrailChanges: bodyOf<GuardrailChanges>(GuardrailChanges),
  pause: bodyOf<ProviderPause>(ProviderPause),
  suspend: bodyOf<Suspension>(Suspension),
}

function parse<T>(body: unknown, spec: Envelope<T>): T {
  const value = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {}
  const result = validate(value, spec)
  if (!result.ok) throw result.error
  return result.value
}

/** How long the admission store may take to answer a ping before an operation on balances is refused. */
const STORE_CHECK_MS = 1_000

/**
 * Refuses an operation on live balances, before it writes anything, while the admission store does not
 * answer: a credit would reach the ledger but not the live balance, and an operator told only that it
 * failed would credit it again. With an account, its own state is read (on a Redis Cluster, its slot's
 * master: another master's failover does not concern it); without, the store is pinged.
 */
async function requireAdmissionStore(deps: AdminDeps, consequence: string, accountId?: string) {
  let timer: Timer | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer within ${STORE_CHECK_MS} ms`)),
      STORE_CHECK_MS,
    )
  })
  try {
    await Promise.race([
      accountId === undefined ? deps.store.ping() : deps.store.snapshot(accountId),
      late,
    ])
  } catch (error) {
    throw new ServiceError(
      'admission_unconfirmed',
      `The admission store does not answer (${(error as Error).message}), so ${consequence}. Retry once GET /readyz answers ready.`,
    )
  } finally {
    clearTimeout(timer)
  }
}

export function operatorRoutes(deps: AdminDeps, token: string) {
  const expected = new TextEncoder().encode(`Bearer ${token}`)
  return new Elysia({ prefix: '/operator/v1' })
    .use(
      openapi({
        path: '/openapi',
        // No reader page: it runs a CDN's script, which must not run on the site's origin (the origin of
        // the session cookie and of the pages that show new keys). The document is at /openapi/json.
        provider: null,
        exclude: { paths: [/^(?!\/operator\/v1\/)/] },
        documentation: {
          info: {
            title: 'Model Gateway operator API',
            version: '1',
            description:
              'What `bun run admin` calls. Authenticated by the operator token (Authorization: Bearer).',
          },
        },
      }),
    )
    .get('/openapi', ({ redirect }) => redirect('/operator/v1/openapi/json', 308), {
      detail: { hide: true },
    })
    .onBeforeHandle(({ request }) => {
      const presented = new TextEncoder().encode(request.headers.get('authorization') ?? '')
      if (!digestsEqual(presented, expected))
        throw new ServiceError(
          'unauthorized',
          'Operator token required: Authorization: Bearer <ADMIN_TOKEN>.',
        )
    })
    .post('/accounts', async ({ body, set }) => {
      const input = parse(body, envelopes.newAccount)
      if (input.creditNano) await requireAdmissionStore(deps, 'no account was made')
      set.status = 201
      return createAccount(deps, input)
    })
    .get('/accounts/:id', async ({ params }) => {
      await requireAdmissionStore(deps, 'the live balance cannot be read', params.id)
      return showAccount(deps, params.id)
    })
    .post('/accounts/:id/credits', async ({ params, body }) => {
      const input = parse(body, envelopes.credit)
      // A credit past the most a balance holds is refused by creditAccount, in the transaction that writes it.
      await requireAdmissionStore(deps, 'nothing was credited', params.id)
      return creditAccount(deps, params.id, input.amountNano, input.reason ?? 'operator credit')
    })
    .post('/accounts/:id/suspend', ({ params, body }) => {
      const input = parse(body, envelopes.suspend)
      return suspendAccount(deps, params.id, input.reason, input.note)
    })
    .post('/accounts/:id/unsuspend', ({ params }) => liftSuspension(deps, params.id))
    .get(
      '/payments',
      async ({ query }) => ({
        payments: await findPayments(deps.sql, query),
      }),
      {
        query: PaymentsQuery,
        response: OperatorPayments,
        detail: {
          summary: 'Payments, newest first, by state (held: waiting for the operator) or account',
        },
      },
    )
    .post(
      '/payments/:id/release',
      async ({ params }) => {
        await requireAdmissionStore(deps, 'nothing was credited')
        return decideHeld(deps, params.id, 'release')
      },
      {
        response: OperatorPayment,
        detail: { summary: 'Credit a held payment (a sanctions-screening hit cleared)' },
      },
    )
    .post('/payments/:id/reject', ({ params }) => decideHeld(deps, params.id, 'reject'), {
      response: OperatorPayment,
      detail: { summary: 'Fail a held payment: it is never credited' },
    })
    .post('/keys', async ({ body, set }) => {
      const { accountId, ...input } = parse(body, envelopes.newKey)
      const created = await createKey(deps, accountId, input)
      set.status = 201
      // The answer carries the key, shown this once: no cache may keep it.
      set.headers['cache-control'] = 'no-store'
      return created
    })
    .patch('/keys/:id', ({ params, body }) =>
      updateKey(deps, params.id, parse(body, envelopes.keyChanges)),
    )
    .post('/keys/:id/revoke', ({ params }) => revokeKey(deps, params.id))
    .get('/accounts/:id/presets', ({ params }) => listPresets(deps, params.id))
    .put('/accounts/:id/presets/:slug', async ({ params, body, set }) => {
      const saved = await savePreset(deps, params.id, params.slug, parse(body, envelopes.preset))
      set.status = saved.created ? 201 : 200
      return saved.preset
    })
    .delete('/accounts/:id/presets/:slug', ({ params }) =>
      deletePreset(deps, params.id, params.slug),
    )
    .get('/accounts/:id/limits', ({ params }) => readLimits(deps, params.id), {
      response: AccountLimits,
      detail: { summary: "An account's own limits (null: the default) and those in force" },
    })
    .patch('/accounts/:id/limits', ({ params, body }) => setLimits(deps, params.id, body), {
      body: AccountLimitsChanges,
      response: AccountLimits,
      detail: {
        summary:
          "Change an account's rpm, tpm and concurrency limits; one left out stays, null returns it to the default, 0 is no limit",
      },
    })
    .post(
      '/accounts/:id/link',
      async ({ params, request, set }) => {
        // The answer carries the new link, a bearer secret shown this once: no cache may keep it.
        set.headers['cache-control'] = 'no-store'
        return {
          accountId: params.id,
          dashboardLink: dashboardLink(
            siteBase(deps.config.PUBLIC_SITE_URL, request),
            await replaceLink(deps.sql, params.id),
          ),
        }
      },
      {
        response: ReplacedLink,
        detail: {
          summary:
            "Replace an accountless account's dashboard link: the new one is shown once; the old one and its sessions end",
        },
      },
    )
    .delete(
      '/accounts/:id/link',
      async ({ params }) => {
        await revokeLink(deps.sql, params.id)
        return { accountId: params.id, revoked: true as const }
      },
      {
        response: RevokedLink,
        detail: { summary: "Revoke an account's dashboard link and end the sessions it opened" },
      },
    )
    .put('/accounts/:id/routing', ({ params, body }) =>
      setRouting(deps, params.id, parse(body, envelopes.routing)),
    )
    .delete('/accounts/:id/routing', ({ params }) => clearRouting(deps, params.id))
    .get('/accounts/:id/guardrails', ({ params }) => listGuardrails(deps, params.id))
    .post('/accounts/:id/guardrails', async ({ params, body, set }) => {
      const created = await createGuardrail(deps, params.id, parse(body, envelopes.newGuardrail))
      set.status = 201
      return created
    })
    .patch('/guardrails/:id', ({ params, body }) =>
      updateGuardrail(deps, params.id, parse(body, envelopes.guardrailChanges)),
    )
    .delete('/guardrails/:id', ({ params }) => deleteGuardrail(deps, params.id))
    .get('/providers', () => listProviders(deps))
    .post('/providers/:id/pause', ({ params, body }) =>
      pauseProvider(deps, params.id, parse(body, envelopes.pause)),
    )
    .post('/providers/:id/resume', ({ params }) => resumeProvider(deps, params.id))
    .use(supportOperatorRoutes(deps))
}
