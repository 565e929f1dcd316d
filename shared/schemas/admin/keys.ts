/**
 * Schemas of the admin API's key routes and of key rotation, shared by the site server, the API server's
 * `POST /keys/:id/rotate` and the dashboard. Money is integer nano-USD (`…Nano`), shown beside it as a
 * decimal USD string (`…Usd`). A key's secret appears only once: in the answer that created it.
 */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable } from './common.ts'
import { KEY_LABELS, KEY_LIMIT, LIMIT_LABELS } from './field-rules.ts'

/** A key's limits and caps are positive: null, not 0, is "none" (0 would read as a limit of nothing). */
const Limit = Type.Integer(KEY_LIMIT)
const Nano = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })
const ModelIds = Type.Array(Type.String({ minLength: 1 }), { maxItems: 1000 })

/**
 * `active`; `in_grace`: rotated, still working until `expiresAt`; `expired`: rotated and past its grace;
 * `revoked`: disabled by hand.
 */
export const KeyStatus = Type.Union([
  Type.Literal('active'),
  Type.Literal('in_grace'),
  Type.Literal('expired'),
  Type.Literal('revoked'),
])
export type KeyStatus = Static<typeof KeyStatus>

export const ApiKey = Type.Object({
  id: Type.String(),
  accountId: Type.String(),
  name: Type.String(),
  /** The first 14 characters of the key, enough to tell keys apart. */
  prefix: Type.String(),
  status: KeyStatus,
  /** End of the rotation grace (ISO 8601 UTC), or null for a key never rotated. */
  expiresAt: Nullable(Type.String()),
  /** The key that replaced this one by rotation. */
  replacedBy: Nullable(Type.String()),
  /** null: no limit of the key (the account's limits still apply). */
  rpmLimit: Nullable(Type.Integer()),
  tpmLimit: Nullable(Type.Integer()),
  concurrency: Nullable(Type.Integer()),
  dailyLimitNano: Nullable(Type.Integer()),
  dailyLimitUsd: Nullable(Type.String()),
  monthlyLimitNano: Nullable(Type.Integer()),
  monthlyLimitUsd: Nullable(Type.String()),
  /** null: every model the account may use. */
  allowedModels: Nullable(Type.Array(Type.String())),
  guardrailId: Nullable(Type.String()),
  createdAt: Type.String(),
  /** Updated from the request log, within a second or so of a request. */
  lastUsedAt: Nullable(Type.String()),
  revokedAt: Nullable(Type.String()),
  /**
   * In the key list, for a key that works: what its caps count now, in the current UTC day and month
   * (its rotation lineage's charges, and its requests in progress, held at their worst case).
   */
  spend: Type.Optional(
    Type.Object({
      todayNano: Type.Integer(),
      todayUsd: Type.String(),
      monthNano: Type.Integer(),
      monthUsd: Type.String(),
      heldNano: Type.Integer(),
      heldUsd: Type.String(),
    }),
  ),
})
export type ApiKey = Static<typeof ApiKey>

export const ApiKeys = Type.Object({ keys: Type.Array(ApiKey) })
export type ApiKeys = Static<typeof ApiKeys>

const settable = {
  name: Type.Optional(Type.String({ maxLength: 100, title: KEY_LABELS.name })),
  /** Requests per minute; null: none. */
  rpmLimit: Type.Optional(Nullable(Limit, { title: LIMIT_LABELS.rpmLimit })),
  /** Estimated input plus output tokens per minute; null: none. */
  tpmLimit: Type.Optional(Nullable(Limit, { title: LIMIT_LABELS.tpmLimit })),
  /** Concurrent requests; null: none. */
  concurrency: Type.Optional(Nullable(Limit, { title: LIMIT_LABELS.concurrency })),
  /** Daily spend cap (UTC days); absent on creation: the configured default; null: no cap. */
  dailyLimitNano: Type.Optional(Nullable(Nano)),
  /** Monthly spend cap (UTC months); absent on creation: the configured default; null: no cap. */
  monthlyLimitNano: Type.Optional(Nullable(Nano)),
  /** Exact catalog model IDs; null: any. An empty list is refused. */
  allowedModels: Type.Optional(Nullable(ModelIds, { title: KEY_LABELS.allowedModels })),
  /** One of the account's guardrails; null: none. */
  guardrailId: Type.Optional(Nullable(Type.String({ minLength: 1 }))),
}

export const NewApiKey = Type.Object(settable, { additionalProperties: false })
export type NewApiKey = Static<typeof NewApiKey>

/** The fields to change; an absent field stays as it is. */
export const ApiKeyChanges = Type.Object(settable, { additionalProperties: false })
export type ApiKeyChanges = Static<typeof ApiKeyChanges>

/**
 * The spend caps a new key gets when its create call leaves them out (`GET /keys/defaults`): the
 * configured defaults, lower for accountless accounts; null: new keys get no such cap.
 */
export const KeyDefaults = Type.Object({
  dailyLimitNano: Nullable(Type.Integer()),
  dailyLimitUsd: Nullable(Type.String()),
  monthlyLimitNano: Nullable(Type.Integer()),
  monthlyLimitUsd: Nullable(Type.String()),
})
export type KeyDefaults = Static<typeof KeyDefaults>

/** A new key: its record and, this once, the key itself. */
export const CreatedApiKey = Type.Object({ ...ApiKey.properties, key: Type.String() })
export type CreatedApiKey = Static<typeof CreatedApiKey>

/**
 * The answer of `POST /keys/:id/rotate` (API server and admin API alike): the new key (`key`, shown this
 * once, its `id` and `prefix`; same name, limits, models and guardrail as the old one) and the old key's
 * `id` and the end of its grace, `expiresAt` (ISO 8601 UTC, 24 hours after the call).
 */
export const RotatedKey = Type.Object({
  key: Type.String(),
  id: Type.String(),
  prefix: Type.String(),
  oldKey: Type.Object({ id: Type.String(), expiresAt: Type.String() }),
})
export type RotatedKey = Static<typeof RotatedKey>
