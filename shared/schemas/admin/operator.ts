/**
 * Schemas of the operator API (`/operator/v1` on the site server, behind the operator token, what
 * `bun run admin` calls) where it has operations of its own: accounts and credits, suspension, provider
 * pauses. Keys, presets, guardrails and routing restrictions use the admin API's schemas
 * (keys.ts, policy.ts), the same vocabulary. Money is integer nano-USD.
 */
import { Type, type Static } from '@sinclair/typebox'
import { NewApiKey } from './keys.ts'

const Nano = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })

export const NewAccount = Type.Object(
  { creditNano: Type.Optional(Nano) },
  { additionalProperties: false },
)
export type NewAccount = Static<typeof NewAccount>

export const Credit = Type.Object(
  {
    amountNano: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
    reason: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
)
export type Credit = Static<typeof Credit>

/** A key of any account: the admin API's fields and the account. */
export const NewAccountKey = Type.Object(
  { accountId: Type.String({ minLength: 1 }), ...NewApiKey.properties },
  { additionalProperties: false },
)
export type NewAccountKey = Static<typeof NewAccountKey>

/** Why an account is suspended: the spec's causes (chargeback, sanctions-screening hit, acceptable-use breach) and the operator's own. */
export const SUSPENSION_REASONS = ['chargeback', 'sanctions', 'abuse', 'operator'] as const
export type SuspensionReason = (typeof SUSPENSION_REASONS)[number]

export const Suspension = Type.Object(
  {
    reason: Type.Union(SUSPENSION_REASONS.map((reason) => Type.Literal(reason))),
    note: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: false },
)
export type Suspension = Static<typeof Suspension>

export const ProviderPause = Type.Object(
  {
    minutes: Type.Optional(Type.Number()),
    until: Type.Optional(Type.String()),
    reason: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
)
export type ProviderPause = Static<typeof ProviderPause>
