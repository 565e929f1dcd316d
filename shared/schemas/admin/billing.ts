/** Schemas of the admin API's billing routes: the live balance, and the top-up step. */
import { Type, type Static } from '@sinclair/typebox'

export const Billing = Type.Object({
  accountId: Type.String(),
  /** Credits minus charges, from the live store. */
  balanceNano: Type.Integer(),
  /** Open holds of requests in progress. */
  heldNano: Type.Integer(),
  /** What new requests can use: balance minus holds. */
  availableNano: Type.Integer(),
  balanceUsd: Type.String(),
  heldUsd: Type.String(),
  availableUsd: Type.String(),
  /** Whether this session may top up; when not, `reason` names the rule (only the owner; secrets not confirmed; suspended). */
  topUp: Type.Object({ allowed: Type.Boolean(), reason: Type.Union([Type.String(), Type.Null()]) }),
})
export type Billing = Static<typeof Billing>

/**
 * How to add credit. Until payments exist the method is `operator`: the instructions say to contact the
 * operator with the account ID. A payment flow will answer here with its own method (a checkout URL, a
 * payment address).
 */
export const TopUp = Type.Object({
  accountId: Type.String(),
  method: Type.Literal('operator'),
  instructions: Type.String(),
})
export type TopUp = Static<typeof TopUp>
