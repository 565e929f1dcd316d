/**
 * Schemas of credit alerts (accounts with identity): a balance threshold, and whether to send e-mail and
 * browser push. Each alert fires once when the available balance falls below the threshold, and is armed
 * again when a credit brings it back to the threshold or above.
 */
import { Type, type Static } from '@sinclair/typebox'
import { USD_AMOUNT_PATTERN } from '../../money.ts'
import { Nullable } from './common.ts'

/** One message of a fired alert: sent, still being tried, or failed after the last attempt. */
export const AlertDelivery = Type.Object({
  channel: Type.Union([Type.Literal('email'), Type.Literal('push')]),
  /** The e-mail address; for a push, the push service's host. */
  to: Type.String(),
  state: Type.Union([Type.Literal('pending'), Type.Literal('sent'), Type.Literal('failed')]),
  attempts: Type.Integer({ minimum: 0 }),
  /** Why the last attempt failed. */
  lastError: Nullable(Type.String()),
  createdAt: Type.String(),
  sentAt: Nullable(Type.String()),
})
export type AlertDelivery = Static<typeof AlertDelivery>

export const AlertSettings = Type.Object({
  /** false for accountless accounts: alerts need an identity (claim the account first). */
  eligible: Type.Boolean(),
  /** null: no alert. */
  thresholdUsd: Nullable(Type.String()),
  thresholdNano: Nullable(Type.Integer()),
  email: Type.Boolean(),
  push: Type.Boolean(),
  /** false after the alert fired, until a credit brings the balance back to the threshold. */
  armed: Type.Boolean(),
  /** Browser push subscriptions registered for the account. */
  pushSubscriptions: Type.Integer({ minimum: 0 }),
  /** `file`: the server has no mail server configured and writes mail to a local file; e-mail alerts reach nobody. */
  mailDelivery: Type.Union([Type.Literal('smtp'), Type.Literal('file')]),
  /** The latest alert deliveries, newest first. */
  deliveries: Type.Array(AlertDelivery),
})
export type AlertSettings = Static<typeof AlertSettings>

export const AlertChanges = Type.Object(
  {
    /** Decimal USD above zero ("5", "12.50"), or null to turn the alert off. */
    thresholdUsd: Nullable(Type.String({ pattern: USD_AMOUNT_PATTERN, maxLength: 20 })),
    email: Type.Boolean(),
    push: Type.Boolean(),
  },
  { additionalProperties: false },
)
export type AlertChanges = Static<typeof AlertChanges>

/** A browser push subscription, as `PushSubscription.toJSON()` gives it. */
export const PushSubscription = Type.Object(
  {
    endpoint: Type.String({ minLength: 1, maxLength: 2048 }),
    expirationTime: Type.Optional(Nullable(Type.Number())),
    keys: Type.Object(
      {
        p256dh: Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_-]+=*$' }),
        auth: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+=*$' }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
)
export type PushSubscription = Static<typeof PushSubscription>

export const PushSubscriptionRef = Type.Object(
  { endpoint: Type.String({ minLength: 1, maxLength: 2048 }) },
  { additionalProperties: false },
)
export type PushSubscriptionRef = Static<typeof PushSubscriptionRef>

export const VapidPublicKey = Type.Object({
  /** The application server key for `pushManager.subscribe` (base64url). */
  publicKey: Type.String(),
})
export type VapidPublicKey = Static<typeof VapidPublicKey>
