/** Schemas of the admin API's billing routes: the live balance and holds, the ledger, and the top-up step. */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable, pageQuery, timeRangeQuery } from './common.ts'

/** The open holds of one key: its requests in progress and what they hold. */
export const KeyHolds = Type.Object({
  keyId: Type.String(),
  /** The key's name and prefix ('' for a key the account no longer lists). */
  name: Type.String(),
  prefix: Type.String(),
  inFlight: Type.Integer({ minimum: 0 }),
  heldNano: Type.Integer({ minimum: 0 }),
  heldUsd: Type.String(),
})
export type KeyHolds = Static<typeof KeyHolds>

export const Billing = Type.Object({
  accountId: Type.String(),
  /** Credits minus charges, from the live store. */
  balanceNano: Type.Integer(),
  /** Open holds of requests in progress. */
  heldNano: Type.Integer(),
  /** Requests in progress: admitted, each with an open hold, not yet settled or released. */
  inFlight: Type.Integer({ minimum: 0 }),
  /** The open holds by key (keys with requests in progress only), most held first. */
  holds: Type.Array(KeyHolds),
  /** What new requests can use: balance minus holds. */
  availableNano: Type.Integer(),
  balanceUsd: Type.String(),
  heldUsd: Type.String(),
  availableUsd: Type.String(),
  /** Whether this session may top up; when not, `reason` names the rule (only the owner; secrets not confirmed; suspended). */
  topUp: Type.Object({
    allowed: Type.Boolean(),
    reason: Type.Union([Type.String(), Type.Null()]),
    /** Whether the server takes stablecoin deposits (GET /billing/deposit answers the address). */
    deposits: Type.Boolean(),
    /** Card top-ups and their bounds; null when the server takes no cards. */
    card: Nullable(
      Type.Object({
        minNano: Type.Integer(),
        maxNano: Type.Integer(),
        minUsd: Type.String(),
        maxUsd: Type.String(),
      }),
    ),
  }),
})
export type Billing = Static<typeof Billing>

/** A top-up's amount: nano-USD in whole cents, within the server's card bounds (card payments only). */
export const TopUpRequest = Type.Object(
  { amountNano: Type.Optional(Type.Integer({ minimum: 1 })) },
  { additionalProperties: false },
)
export type TopUpRequest = Static<typeof TopUpRequest>

/**
 * How to add credit: `card` answers the Checkout page to send the owner to (the payment is credited when
 * Stripe confirms it); `operator`, on a server that takes no payments, says to contact the operator.
 */
export const TopUp = Type.Union([
  Type.Object({
    accountId: Type.String(),
    method: Type.Literal('card'),
    paymentId: Type.String(),
    url: Type.String(),
  }),
  Type.Object({
    accountId: Type.String(),
    method: Type.Literal('operator'),
    instructions: Type.String(),
  }),
])
export type TopUp = Static<typeof TopUp>

/** The account's own deposit address and what it accepts. */
export const Deposit = Type.Object({
  accountId: Type.String(),
  address: Type.String(),
  chainId: Type.Integer(),
  /** Blocks on top of a transfer before it is credited. */
  confirmations: Type.Integer(),
  tokens: Type.Array(
    Type.Object({ symbol: Type.String(), contract: Type.String(), decimals: Type.Integer() }),
  ),
})
export type Deposit = Static<typeof Deposit>

export const PaymentView = Type.Object({
  id: Type.String(),
  provider: Type.Union([Type.Literal('stripe'), Type.Literal('chain')]),
  amountNano: Type.Integer(),
  amountUsd: Type.String(),
  currency: Type.String(),
  state: Type.Union([
    Type.Literal('pending'),
    Type.Literal('credited'),
    Type.Literal('failed'),
    Type.Literal('reversed'),
    Type.Literal('held'),
  ]),
  createdAt: Type.String(),
  updatedAt: Type.String(),
})
export const Payments = Type.Object({ payments: Type.Array(PaymentView) })

/** A payment as the operator sees it: also its account and the provider's identity of it. */
export const OperatorPayment = Type.Composite([
  PaymentView,
  Type.Object({ accountId: Type.String(), externalId: Type.String() }),
])
export const OperatorPayments = Type.Object({ payments: Type.Array(OperatorPayment) })
export const PaymentsQuery = Type.Object(
  {
    state: Type.Optional(PaymentView.properties.state),
    accountId: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
)
export type Payments = Static<typeof Payments>

export const LedgerKind = Type.Union([
  Type.Literal('credit'),
  Type.Literal('charge'),
  Type.Literal('writeoff'),
  Type.Literal('adjustment'),
])
export type LedgerKind = Static<typeof LedgerKind>

export const LedgerQuery = Type.Object(
  {
    ...pageQuery,
    kind: Type.Optional(LedgerKind),
    ...timeRangeQuery,
  },
  { additionalProperties: false },
)
export type LedgerQuery = Static<typeof LedgerQuery>

/**
 * One ledger entry. `credit`: money added (`amount` > 0); `charge`: what a request paid (`amount` ≤ 0);
 * `writeoff`: cost the service absorbed (`writtenOff`, `amount` 0, `reason` says why); `adjustment`: an
 * operator's correction. The balance is the sum of every entry's amount.
 */
export const LedgerEntry = Type.Object({
  id: Type.String(),
  time: Type.String(),
  kind: LedgerKind,
  amountNano: Type.Integer(),
  amountUsd: Type.String(),
  writtenOffNano: Type.Integer({ minimum: 0 }),
  writtenOffUsd: Type.String(),
  /** Charges and write-offs: the request's ID; credits and adjustments: the entry's own reference. */
  reference: Type.String(),
  keyId: Nullable(Type.String()),
  reason: Nullable(Type.String()),
})
export type LedgerEntry = Static<typeof LedgerEntry>

export const Ledger = Type.Object({
  items: Type.Array(LedgerEntry),
  /** Pass as `before` for the next (older) page; null on the last page. */
  nextBefore: Nullable(Type.String()),
})
export type Ledger = Static<typeof Ledger>
