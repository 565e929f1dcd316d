/**
 * The operator API on the site server (/operator/v1), behind the operator token: what `bun run admin`
 * calls. Bodies are validated with TypeBox; money goes in as decimal USD and comes out as integer
 * nano-USD plus a decimal USD string.
 */
import { Type, type Static } from '@sinclair/typebox'
import { Elysia } from 'elysia'
import { ServiceError } from '../../shared/errors.ts'
import { usdToNano } from '../../shared/money.ts'
import { createAccount, creditAccount, showAccount } from '../accounts/accounts.ts'
import { createKey, revokeKey } from '../accounts/keys.ts'
import type { OperatorDeps } from '../accounts/operator-deps.ts'
import { digestsEqual } from '../keys/api-key.ts'
import { envelope, validate, type Envelope } from '../gateway/validate.ts'

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

const fieldsOf = (schema: { properties: object }) => new Set(Object.keys(schema.properties))
const envelopes = {
  newAccount: envelope<Static<typeof NewAccount>>(NewAccount, fieldsOf(NewAccount)),
  credit: envelope<Static<typeof Credit>>(Credit, fieldsOf(Credit)),
  newKey: envelope<Static<typeof NewKey>>(NewKey, fieldsOf(NewKey)),
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

export function operatorRoutes(deps: OperatorDeps, token: string) {
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
    .post('/keys/:id/revoke', ({ params }) => revokeKey(deps, params.id))
}
