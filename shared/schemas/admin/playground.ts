/**
 * Schemas of the dashboard playground: free chat (the trial: a few messages on the free automatic choice,
 * never a paid request) and paid chat (the normal gateway, charged to the balance, chosen explicitly).
 */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable } from './common.ts'

export const PlaygroundMessage = Type.Object(
  {
    role: Type.Union([Type.Literal('system'), Type.Literal('user'), Type.Literal('assistant')]),
    content: Type.String({ maxLength: 200_000 }),
  },
  { additionalProperties: false },
)
export type PlaygroundMessage = Static<typeof PlaygroundMessage>

export const PlaygroundChat = Type.Object(
  {
    /** Paid chat: any model, preset or automatic choice the account may use (required). Free chat: a free model, default the free chat model. */
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    messages: Type.Array(PlaygroundMessage, { minItems: 1, maxItems: 500 }),
    /** true: a paid request charged to the balance. Absent or false: a free trial message. */
    paid: Type.Optional(Type.Boolean()),
    /** Stream the answer as Chat Completions server-sent events. */
    stream: Type.Optional(Type.Boolean()),
    /** Output limit (the hold of a paid request is computed from it). */
    maxTokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  },
  { additionalProperties: false },
)
export type PlaygroundChat = Static<typeof PlaygroundChat>

export const TrialStatus = Type.Object({
  /** FREE_CHAT_MESSAGES: free messages per account. */
  limit: Type.Integer({ minimum: 0 }),
  used: Type.Integer({ minimum: 0 }),
  remaining: Type.Integer({ minimum: 0 }),
  /** What free chat uses (FREE_CHAT_MODEL, by default the catalog's Auto Free). */
  model: Type.String(),
  /** false: that is no free model or free automatic choice of this catalog, so free chat is refused. */
  available: Type.Boolean(),
})
export type TrialStatus = Static<typeof TrialStatus>

export const PlaygroundAnswer = Type.Object({
  requestId: Type.String(),
  paid: Type.Boolean(),
  /** The catalog model that answered. */
  model: Nullable(Type.String()),
  /** What the balance paid for this message ("0" for free chat). */
  costUsd: Type.String(),
  /** Available balance after the request, as the gateway reported it. */
  balanceUsd: Nullable(Type.String()),
  trial: TrialStatus,
  /** The answer as the Chat Completions API returns it (choices, usage with cost). */
  completion: Type.Unknown(),
})
export type PlaygroundAnswer = Static<typeof PlaygroundAnswer>
