/**
 * The operator API on the site server (/operator/v1), behind the operator token: what `bun run admin`
 * calls. Accounts, credits, suspension and keys; an account's presets, routing restrictions and
 * guardrails; provider pauses; support tickets (support-operator-routes.ts). Bodies are validated with
 * TypeBox; money goes in as decimal USD and comes out as integer nano-USD plus a decimal USD string.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { Elysia } from 'elysia'
import { ServiceError } from '../../shared/errors.ts'
import { usdToNano } from '../../shared/money.ts'
import { createAccount, creditAccount, showAccount } from '../accounts/accounts.ts'
import { createKey, revokeKey, updateKey } from '../accounts/keys.ts'
import type { AdminDeps } from './admin/admin-deps.ts'
import { supportOperatorRoutes } from './support-operator-routes.ts'
import { liftSuspension, suspendAccount, type SuspensionReason } from '../accounts/suspension.ts'
import { digestsEqual } from '../keys/api-key.ts'
import { envelope, validate, type Envelope } from '../gateway/validate.ts'
import { createGuardrail, deleteGuardrail, listGuardrails, updateGuardrail } from '../policy/guardrails.ts'
import { listProviders, pauseProvider, resumeProvider } from '../policy/pauses.ts'
import { deletePreset, listPresets, savePreset } from '../policy/presets.ts'
import { PresetParams } from '../../shared/schemas/admin/policy.ts'
import { clearRouting, setRouting } from '../policy/routing.ts'

const Usd = Type.Union([Type.String(), Type.Number()])
const Limit = Type.Integer({ minimum: 0 })

const NewAccount = Type.Object({ creditUsd: Type.Optional(Usd) })
const Credit = Type.Object({ usd: Usd, reason: Type.Optional(Type.String({ maxLength: 200 })) })
const NewKey = Type.Object({
  accountId: Type.String({ minLength: 1 }),
  name: Type.Optional(Type.String({ maxLength: 100 })),
  rpm: Type.Optional(Limit),
  tpm: Type.Optional(Limit),
  concurrency: Type.Optional(Limit),
  dailyUsd: Type.Optional(Type.Union([Usd, Type.Null()])),
  monthlyUsd: Type.Optional(Type.Union([Usd, Type.Null()])),
  models: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
})
const OrNull = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]))
const Ids = Type.Array(Type.String({ minLength: 1 }))
const KeyChanges = Type.Object({
  guardrailId: OrNull(Type.String({ minLength: 1 })),
  models: OrNull(Ids),
  rpm: OrNull(Limit),
  tpm: OrNull(Limit),
  concurrency: OrNull(Limit),
  dailyUsd: OrNull(Usd),
  monthlyUsd: OrNull(Usd),
})
const Preset = Type.Object({
  model: Type.String({ minLength: 1 }),
  fallbacks: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 3 })),
  params: Type.Optional(PresetParams),
})
const Routing = Type.Object({ models: OrNull(Ids), providers: OrNull(Ids) })
const guardrailFields = {
  models: OrNull(Ids),
  budgetUsd: OrNull(Usd),
  filters: Type.Optional(Type.Array(Type.Unknown())),
}
const NewGuardrail = Type.Object({ name: Type.String({ minLength: 1 }), ...guardrailFields })
const GuardrailChanges = Type.Object({ name: Type.Optional(Type.String({ minLength: 1 })), ...guardrailFields })
const Suspend = Type.Object({ reason: Type.String(), note: Type.Optional(Type.String({ maxLength: 1000 })) })
const Pause = Type.Object({
  minutes: Type.Optional(Type.Number()),
  until: Type.Optional(Type.String()),
  reason: Type.Optional(Type.String({ maxLength: 200 })),
})

const fieldsOf = (schema: { properties: object }) => new Set(Object.keys(schema.properties))
const envelopes = {
  newAccount: envelope<Static<typeof NewAccount>>(NewAccount, fieldsOf(NewAccount)),
  credit: envelope<Static<typeof Credit>>(Credit, fieldsOf(Credit)),
  newKey: envelope<Static<typeof NewKey>>(NewKey, fieldsOf(NewKey)),
  keyChanges: envelope<Static<typeof KeyChanges>>(KeyChanges, fieldsOf(KeyChanges)),
  preset: envelope<Static<typeof Preset>>(Preset, fieldsOf(Preset)),
  routing: envelope<Static<typeof Routing>>(Routing, fieldsOf(Routing)),
  newGuardrail: envelope<Static<typeof NewGuardrail>>(NewGuardrail, fieldsOf(NewGuardrail)),
  guardrailChanges: envelope<Static<typeof GuardrailChanges>>(GuardrailChanges, fieldsOf(GuardrailChanges)),
  pause: envelope<Static<typeof Pause>>(Pause, fieldsOf(Pause)),
  suspend: envelope<Static<typeof Suspend>>(Suspend, fieldsOf(Suspend)),
}

function parse<T>(body: unknown, spec: Envelope<T>): T {
  const value = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {}
  const result = validate(value, spec)
  if (!result.ok) throw result.error
  return result.value
}

function nano(value: string | number, param: string): number {
  const amount = usdToNano(value)
  if (amount === undefined) throw new ServiceError('invalid_request', `${param}: must be a non-negative USD amount with at most 9 decimals`, { param })
  return amount
}

function optionalCap(value: string | number | null | undefined, param: string): number | null | undefined {
  return value === undefined || value === null ? value : nano(value, param)
}

export function operatorRoutes(deps: AdminDeps, token: string) {
  const expected = new TextEncoder().encode(`Bearer ${token}`)
  return new Elysia({ prefix: '/operator/v1' })
    .onBeforeHandle(({ request }) => {
      const presented = new TextEncoder().encode(request.headers.get('authorization') ?? '')
      if (!digestsEqual(presented, expected)) throw new ServiceError('unauthorized', 'Operator token required: Authorization: Bearer <ADMIN_TOKEN>.')
    })
    .post('/accounts', async ({ body, set }) => {
      const input = parse(body, envelopes.newAccount)
      set.status = 201
      return createAccount(deps, { creditNano: input.creditUsd === undefined ? undefined : nano(input.creditUsd, 'creditUsd') })
    })
    .get('/accounts/:id', ({ params }) => showAccount(deps, params.id))
    .post('/accounts/:id/credits', async ({ params, body }) => {
      const input = parse(body, envelopes.credit)
      return creditAccount(deps, params.id, nano(input.usd, 'usd'), input.reason ?? 'operator credit')
    })
    .post('/accounts/:id/suspend', ({ params, body }) => {
      const input = parse(body, envelopes.suspend)
      return suspendAccount(deps, params.id, input.reason as SuspensionReason, input.note)
    })
    .post('/accounts/:id/unsuspend', ({ params }) => liftSuspension(deps, params.id))
    .post('/keys', async ({ body, set }) => {
      const input = parse(body, envelopes.newKey)
      set.status = 201
      return createKey(deps, {
        accountId: input.accountId,
        name: input.name,
        rpm: input.rpm,
        tpm: input.tpm,
        concurrency: input.concurrency,
        dailyLimitNano: optionalCap(input.dailyUsd, 'dailyUsd'),
        monthlyLimitNano: optionalCap(input.monthlyUsd, 'monthlyUsd'),
        models: input.models,
      })
    })
    .patch('/keys/:id', ({ params, body }) => {
      const input = parse(body, envelopes.keyChanges)
      return updateKey(deps, params.id, {
        guardrailId: input.guardrailId,
        models: input.models,
        rpm: input.rpm,
        tpm: input.tpm,
        concurrency: input.concurrency,
        dailyLimitNano: optionalCap(input.dailyUsd, 'dailyUsd'),
        monthlyLimitNano: optionalCap(input.monthlyUsd, 'monthlyUsd'),
      })
    })
    .post('/keys/:id/revoke', ({ params }) => revokeKey(deps, params.id))
    .get('/accounts/:id/presets', ({ params }) => listPresets(deps, params.id))
    .put('/accounts/:id/presets/:slug', async ({ params, body, set }) => {
      const saved = await savePreset(deps, params.id, params.slug, parse(body, envelopes.preset))
      set.status = saved.created ? 201 : 200
      return saved.preset
    })
    .delete('/accounts/:id/presets/:slug', ({ params }) => deletePreset(deps, params.id, params.slug))
    .put('/accounts/:id/routing', ({ params, body }) => setRouting(deps, params.id, parse(body, envelopes.routing)))
    .delete('/accounts/:id/routing', ({ params }) => clearRouting(deps, params.id))
    .get('/accounts/:id/guardrails', ({ params }) => listGuardrails(deps, params.id))
    .post('/accounts/:id/guardrails', async ({ params, body, set }) => {
      const input = parse(body, envelopes.newGuardrail)
      const created = await createGuardrail(deps, params.id, { ...input, budgetNano: optionalCap(input.budgetUsd, 'budgetUsd') })
      set.status = 201
      return created
    })
    .patch('/guardrails/:id', ({ params, body }) => {
      const input = parse(body, envelopes.guardrailChanges)
      return updateGuardrail(deps, params.id, {
        name: input.name,
        models: input.models,
        budgetNano: optionalCap(input.budgetUsd, 'budgetUsd'),
        filters: input.filters,
      })
    })
    .delete('/guardrails/:id', ({ params }) => deleteGuardrail(deps, params.id))
    .get('/providers', () => listProviders(deps))
    .post('/providers/:id/pause', ({ params, body }) => pauseProvider(deps, params.id, parse(body, envelopes.pause)))
    .post('/providers/:id/resume', ({ params }) => resumeProvider(deps, params.id))
    .use(supportOperatorRoutes(deps))
}
