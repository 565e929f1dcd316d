/**
 * Schemas of the admin API's usage and activity routes, shared by the site server and the dashboard.
 * Totals come from the hourly rollup the record writer keeps; the activity list from the request log,
 * newest first. Money is integer nano-USD (`…Nano`) with the same amount as a decimal USD string (`…Usd`).
 * Times are ISO 8601 UTC.
 */
import { Type, type Static } from '@sinclair/typebox'
import { Count, Nullable, pageQuery, timeRangeQuery } from './common.ts'

export const Granularity = Type.Union([Type.Literal('hour'), Type.Literal('day')])
export type Granularity = Static<typeof Granularity>

export const UsageGroup = Type.Union([Type.Literal('model'), Type.Literal('key')])
export type UsageGroup = Static<typeof UsageGroup>

export const UsageQuery = Type.Object(
  {
    /** Start (ISO 8601), rounded down to its hour or UTC day. Default: 24 hours (hour) or 30 days (day) before `to`. */
    from: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
    /** End (ISO 8601, exclusive). Default: now. */
    to: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
    granularity: Type.Optional(Granularity),
    groupBy: Type.Optional(UsageGroup),
  },
  { additionalProperties: false },
)
export type UsageQuery = Static<typeof UsageQuery>

export const UsageTotals = Type.Object({
  requests: Count,
  /** Requests answered with an error status (400 or above). */
  errors: Count,
  inputTokens: Count,
  outputTokens: Count,
  /** Cost of what was delivered, at catalog prices. */
  costNano: Count,
  costUsd: Type.String(),
  /** What the balance paid (the cost, minus anything written off). */
  chargedNano: Count,
  chargedUsd: Type.String(),
})
export type UsageTotals = Static<typeof UsageTotals>

export const UsageBucket = Type.Composite([
  Type.Object({
    /** Start of the hour or UTC day. */
    start: Type.String(),
    /** With groupBy=model: the model that served (else the one asked for; '' when none was named). */
    model: Type.Optional(Type.String()),
    /** With groupBy=key: the key. */
    key: Type.Optional(
      Type.Object({ id: Type.String(), name: Type.String(), prefix: Type.String() }),
    ),
  }),
  UsageTotals,
])
export type UsageBucket = Static<typeof UsageBucket>

export const Usage = Type.Object({
  from: Type.String(),
  to: Type.String(),
  granularity: Granularity,
  groupBy: Nullable(UsageGroup),
  /** Periods with traffic only, oldest first (within a period: by model or key). */
  buckets: Type.Array(UsageBucket),
  totals: UsageTotals,
})
export type Usage = Static<typeof Usage>

/** `ok`: answered below 400; `error`: 400 or above; or one HTTP status ("429"). */
export const ActivityStatus = Type.String({ pattern: '^(ok|error|[1-5][0-9]{2})$' })
export type ActivityStatus = Static<typeof ActivityStatus>

export const ActivityQuery = Type.Object(
  {
    ...pageQuery,
    /** Only this key's requests. */
    keyId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    /** Only requests of this model: the one that served, or the one asked for when none served (as usage groups them). */
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    status: Type.Optional(ActivityStatus),
    ...timeRangeQuery,
  },
  { additionalProperties: false },
)
export type ActivityQuery = Static<typeof ActivityQuery>

export const ActivityItem = Type.Object({
  requestId: Type.String(),
  /** When the request arrived. */
  time: Type.String(),
  keyId: Type.String(),
  /** chat, messages, responses or images. */
  apiStyle: Type.String(),
  /** The model as the client named it. */
  model: Nullable(Type.String()),
  /** The catalog model that served it. */
  servedModel: Nullable(Type.String()),
  provider: Nullable(Type.String()),
  stream: Type.Boolean(),
  status: Type.Integer(),
  errorCode: Nullable(Type.String()),
  inputTokens: Count,
  outputTokens: Count,
  costNano: Count,
  costUsd: Type.String(),
  chargedNano: Count,
  chargedUsd: Type.String(),
  latencyMs: Count,
  /** What the key's guardrail redacted, by detector (`email=2, phone=1`), as the response's header said; never the text. */
  guardrailRedactions: Nullable(Type.String()),
})
export type ActivityItem = Static<typeof ActivityItem>

export const Activity = Type.Object({
  items: Type.Array(ActivityItem),
  /** Pass as `before` for the next (older) page; null on the last page. */
  nextBefore: Nullable(Type.String()),
})
export type Activity = Static<typeof Activity>

export const ActivitySummary = Type.Object({
  from: Type.String(),
  to: Type.String(),
  /** The last 24 hours, one entry per hour (zeros included), oldest first. */
  hours: Type.Array(Type.Composite([Type.Object({ start: Type.String() }), UsageTotals])),
  totals: UsageTotals,
})
export type ActivitySummary = Static<typeof ActivitySummary>
