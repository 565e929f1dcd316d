/**
 * Schemas of the admin API's policy routes: presets, guardrails and the account's routing restrictions,
 * shared by the site server and the dashboard. Model lists take exact catalog model IDs (null: no
 * restriction; an empty list is refused); money is integer nano-USD with a decimal USD string beside it.
 */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable } from './common.ts'
import {
  ACCOUNT_LIMIT,
  ALLOWLIST_LABELS,
  FILTER_RULES,
  GUARDRAIL_LABELS,
  GUARDRAIL_NAME,
  LIMIT_LABELS,
  PRESET_LABELS,
  PRESET_MAX_FALLBACKS,
  PRESET_PARAM_RULES,
} from './field-rules.ts'

const Ids = Type.Array(Type.String({ minLength: 1 }), { maxItems: 1000 })

/** Default parameters a preset may set, applied where the request sets none: the ones every client style can carry. */
export const PresetParams = Type.Object(
  {
    temperature: Type.Optional(
      Type.Number({
        ...PRESET_PARAM_RULES.temperature,
        title: PRESET_LABELS['params.temperature'],
      }),
    ),
    top_p: Type.Optional(
      Type.Number({ ...PRESET_PARAM_RULES.top_p, title: PRESET_LABELS['params.top_p'] }),
    ),
    max_tokens: Type.Optional(
      Type.Integer({ ...PRESET_PARAM_RULES.max_tokens, title: PRESET_LABELS['params.max_tokens'] }),
    ),
    stop: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        ...PRESET_PARAM_RULES.stop,
        title: PRESET_LABELS['params.stop'],
      }),
    ),
  },
  { additionalProperties: false },
)
export type PresetParams = Static<typeof PresetParams>

export const Preset = Type.Object({
  accountId: Type.String(),
  slug: Type.String(),
  /** What a client sends as `model`: `@preset/<slug>`. */
  id: Type.String(),
  model: Type.String(),
  fallbacks: Type.Array(Type.String()),
  params: PresetParams,
  createdAt: Type.String(),
  updatedAt: Type.String(),
})
export type Preset = Static<typeof Preset>

export const Presets = Type.Object({
  presets: Type.Array(Preset),
  /** The API server's address (`{base_url}`): clients call a preset at `<baseUrl>/v1/chat/completions` and the other styles' paths. */
  baseUrl: Type.String(),
})
export type Presets = Static<typeof Presets>

/** `PUT /presets/:slug` creates (201) or replaces (200) the preset. */
export const PresetBody = Type.Object(
  {
    /** A catalog model ID, an alias or a `service/auto…` choice (not another preset). */
    model: Type.String({ minLength: 1, title: PRESET_LABELS.model }),
    fallbacks: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        maxItems: PRESET_MAX_FALLBACKS,
        title: PRESET_LABELS.fallbacks,
      }),
    ),
    params: Type.Optional(PresetParams),
  },
  { additionalProperties: false },
)
export type PresetBody = Static<typeof PresetBody>

export const PresetDeleted = Type.Object({
  accountId: Type.String(),
  slug: Type.String(),
  deleted: Type.Literal(true),
})
export type PresetDeleted = Static<typeof PresetDeleted>

/**
 * A content filter: `detector` is one of email, phone, credit_card, iban, us_ssn, ip_address, secret,
 * regex (with an RE2 `pattern`) or keywords (with `keywords`); `action` is block or redact; `name` labels
 * it in refusals and redaction markers. Each filter is checked when saved; a bad one is refused naming it.
 */
export const GuardrailFilter = Type.Object({
  detector: Type.String(),
  action: Type.String({ description: 'block or redact' }),
  pattern: Type.Optional(Type.String()),
  keywords: Type.Optional(Type.Array(Type.String())),
  name: Type.Optional(Type.String()),
})
export type GuardrailFilter = Static<typeof GuardrailFilter>

export const Guardrail = Type.Object({
  id: Type.String(),
  accountId: Type.String(),
  name: Type.String(),
  models: Nullable(Type.Array(Type.String())),
  /** Monthly budget (UTC months) across the keys assigned to it; null: none. */
  budgetNano: Nullable(Type.Integer()),
  budgetUsd: Nullable(Type.String()),
  filters: Type.Array(Type.Unknown()),
  /** Keys the guardrail is assigned to (assign with the key's `guardrailId`). */
  keyIds: Type.Array(Type.String()),
  createdAt: Type.String(),
  updatedAt: Type.String(),
  /**
   * In the guardrail list: what its budget counts now, in the current UTC month (its keys' charges, and
   * their requests in progress, held at their worst case).
   */
  budgetUsed: Type.Optional(Type.Object({ monthNano: Type.Integer(), monthUsd: Type.String() })),
})
export type Guardrail = Static<typeof Guardrail>

export const Guardrails = Type.Object({ guardrails: Type.Array(Guardrail) })
export type Guardrails = Static<typeof Guardrails>

const GuardrailName = Type.String({ ...GUARDRAIL_NAME, title: GUARDRAIL_LABELS.name })
const guardrailFields = {
  models: Type.Optional(Nullable(Ids, { title: GUARDRAIL_LABELS.models })),
  /** In nano-USD, so untitled: a refusal of it says `budgetNano`, not the form's USD label. */
  budgetNano: Type.Optional(
    Nullable(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
  ),
  filters: Type.Optional(
    Type.Array(GuardrailFilter, {
      maxItems: FILTER_RULES.maxFilters,
      title: GUARDRAIL_LABELS.filters,
    }),
  ),
}

export const NewGuardrail = Type.Object(
  { name: GuardrailName, ...guardrailFields },
  { additionalProperties: false },
)
export type NewGuardrail = Static<typeof NewGuardrail>

export const GuardrailChanges = Type.Object(
  { name: Type.Optional(GuardrailName), ...guardrailFields },
  { additionalProperties: false },
)
export type GuardrailChanges = Static<typeof GuardrailChanges>

/** Deleting a guardrail unassigns it from its keys first; they keep working without it. */
export const GuardrailDeleted = Type.Object({
  id: Type.String(),
  deleted: Type.Literal(true),
  unassignedKeyIds: Type.Array(Type.String()),
})
export type GuardrailDeleted = Static<typeof GuardrailDeleted>

/** The account's routing restrictions: models its keys may call, providers that may serve them (null: any). */
export const Routing = Type.Object({
  accountId: Type.String(),
  models: Nullable(Type.Array(Type.String())),
  providers: Nullable(Type.Array(Type.String())),
})
export type Routing = Static<typeof Routing>

/** A list given replaces the stored one, null removes it, an absent one stays as it is. */
export const RoutingChanges = Type.Object(
  {
    models: Type.Optional(Nullable(Ids, { title: ALLOWLIST_LABELS.models })),
    providers: Type.Optional(Nullable(Ids, { title: ALLOWLIST_LABELS.providers })),
  },
  { additionalProperties: false },
)
export type RoutingChanges = Static<typeof RoutingChanges>

/**
 * The catalog's providers a routing restriction may name (`GET /routing/providers`), each with the model
 * IDs it has a route for (chat and image models).
 */
export const RoutingProviders = Type.Object({
  providers: Type.Array(Type.Object({ id: Type.String(), models: Type.Array(Type.String()) })),
})
export type RoutingProviders = Static<typeof RoutingProviders>

/** A per-minute or concurrency limit: a whole number, 0 for no limit. */
const AccountLimit = Type.Integer(ACCOUNT_LIMIT)

/**
 * The account-level limits every key of the account shares: requests and tokens per minute and requests
 * at once. `null`: the service's default applies (`effective` says what that is); 0: no limit.
 */
export const AccountLimits = Type.Object({
  accountId: Type.String(),
  rpmLimit: Nullable(AccountLimit),
  tpmLimit: Nullable(AccountLimit),
  concurrency: Nullable(AccountLimit),
  /** The limits in force: the account's own, else the defaults. */
  effective: Type.Object({
    rpmLimit: AccountLimit,
    tpmLimit: AccountLimit,
    concurrency: AccountLimit,
  }),
})
export type AccountLimits = Static<typeof AccountLimits>

/** A limit given replaces the account's, null returns it to the default, an absent one stays as it is. */
export const AccountLimitsChanges = Type.Object(
  {
    rpmLimit: Type.Optional(Nullable(AccountLimit, { title: LIMIT_LABELS.rpmLimit })),
    tpmLimit: Type.Optional(Nullable(AccountLimit, { title: LIMIT_LABELS.tpmLimit })),
    concurrency: Type.Optional(Nullable(AccountLimit, { title: LIMIT_LABELS.concurrency })),
  },
  { additionalProperties: false },
)
export type AccountLimitsChanges = Static<typeof AccountLimitsChanges>
