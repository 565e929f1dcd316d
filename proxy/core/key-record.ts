/**
 * What the hot path knows of a key, shared by every layer that handles one (the pipeline's stages,
 * policy, the account services, the key cache): its identity, state, limits, account policy, guardrail
 * and the account's presets. Loaded from Postgres by stores/keys/load-keys.ts.
 */
import type { PresetParams } from '../../shared/schemas/admin/policy.ts'

/** Per-key limits; 0 means no limit. */
export type KeyLimits = {
  rpm: number
  tpm: number
  concurrency: number
  dailyNano: number
  monthlyNano: number
}

/** Account-level limits; 0 means no limit. */
export type AccountLimits = { rpm: number; tpm: number; concurrency: number }

/** A saved model choice of the account, called as `@preset/<slug>`. */
export type Preset = { slug: string; model: string; fallbacks: string[]; params: PresetParams }

/** The guardrail assigned to a key, as stored (its filters are compiled once per version). */
export type GuardrailRecord = {
  id: string
  /** Changes when the guardrail is edited. */
  version: number
  allowedModels: ReadonlySet<string> | null
  /** Monthly budget across the guardrail's keys; 0 means none. */
  budgetNano: number
  filters: unknown[]
}

export type KeyRecord = {
  id: string
  /**
   * The key whose limits this one counts against: the first of its rotation lineage (itself unless it
   * was made by rotating another), so that a rotation never starts fresh rate or spend windows.
   */
  limitsId: string
  accountId: string
  prefix: string
  hash: Uint8Array
  status: 'active' | 'revoked'
  /** Epoch ms after which the key stops working (rotated out), or null. */
  expiresAtMs: number | null
  limits: KeyLimits
  /** Exact model IDs the key may call; null means any. */
  allowedModels: ReadonlySet<string> | null
  accountStatus: 'active' | 'suspended'
  accountLimits: AccountLimits
  /** Account-wide routing restrictions; null means none. */
  accountModels: ReadonlySet<string> | null
  accountProviders: ReadonlySet<string> | null
  guardrail: GuardrailRecord | null
  /** The account's presets by slug. */
  presets: ReadonlyMap<string, Preset>
}
