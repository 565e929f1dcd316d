/**
 * Loads what the hot path knows of a key (core/key-record.ts) from Postgres in one query by the key's
 * stored prefix. Limits are resolved here (NULL → default, 0 → none) so the request path reads plain
 * numbers.
 */
import type { Sql } from 'postgres'
import type { PresetParams } from '../../../shared/schemas/admin/policy.ts'
import type { AccountLimits, KeyRecord } from '../../core/key-record.ts'
import type { KeyRow } from './key-row.ts'

/** The key's columns, its digest, and what the joins add: its account's policy, its guardrail, the account's presets. */
type Row = Pick<
  KeyRow,
  | 'id'
  | 'limits_key_id'
  | 'account_id'
  | 'prefix'
  | 'status'
  | 'expires_at'
  | 'rpm_limit'
  | 'tpm_limit'
  | 'concurrency_limit'
  | 'daily_limit_nano'
  | 'monthly_limit_nano'
  | 'allowed_models'
  | 'guardrail_id'
> & {
  key_hash: Uint8Array
  account_status: 'active' | 'suspended'
  account_rpm_limit: number | null
  account_tpm_limit: number | null
  account_concurrency_limit: number | null
  account_allowed_models: string[] | null
  account_allowed_providers: string[] | null
  guardrail_updated_at: Date | null
  guardrail_allowed_models: string[] | null
  guardrail_budget_nano: number | null
  guardrail_filters: unknown[] | null
  presets: { slug: string; model: string; fallbacks: string[]; params: PresetParams }[] | null
}

export async function loadKeysByPrefix(
  sql: Sql,
  prefix: string,
  defaults: AccountLimits,
): Promise<KeyRecord[]> {
  const rows = await sql<Row[]>`
    SELECT k.id, k.limits_key_id, k.account_id, k.prefix, k.key_hash, k.status, k.expires_at,
           k.rpm_limit, k.tpm_limit, k.concurrency_limit, k.daily_limit_nano, k.monthly_limit_nano, k.allowed_models,
           a.status AS account_status, a.rpm_limit AS account_rpm_limit, a.tpm_limit AS account_tpm_limit,
           a.concurrency_limit AS account_concurrency_limit,
           a.allowed_models AS account_allowed_models, a.allowed_providers AS account_allowed_providers,
           g.id AS guardrail_id, g.updated_at AS guardrail_updated_at, g.allowed_models AS guardrail_allowed_models,
           g.budget_nano AS guardrail_budget_nano, g.filters AS guardrail_filters,
           (SELECT json_agg(json_build_object('slug', p.slug, 'model', p.model, 'fallbacks', p.fallbacks, 'params', p.params))
            FROM presets p WHERE p.account_id = k.account_id) AS presets
    FROM api_keys k
    JOIN accounts a ON a.id = k.account_id
    LEFT JOIN guardrails g ON g.id = k.guardrail_id
    WHERE k.prefix = ${prefix}`
  return rows.map((row) => ({
    id: row.id,
    limitsId: row.limits_key_id,
    accountId: row.account_id,
    prefix: row.prefix,
    hash: new Uint8Array(row.key_hash),
    status: row.status,
    expiresAtMs: row.expires_at ? row.expires_at.getTime() : null,
    limits: {
      rpm: row.rpm_limit ?? 0,
      tpm: row.tpm_limit ?? 0,
      concurrency: row.concurrency_limit ?? 0,
      dailyNano: row.daily_limit_nano ?? 0,
      monthlyNano: row.monthly_limit_nano ?? 0,
    },
    allowedModels: row.allowed_models ? new Set(row.allowed_models) : null,
    accountStatus: row.account_status,
    accountLimits: {
      rpm: row.account_rpm_limit ?? defaults.rpm,
      tpm: row.account_tpm_limit ?? defaults.tpm,
      concurrency: row.account_concurrency_limit ?? defaults.concurrency,
    },
    accountModels: row.account_allowed_models ? new Set(row.account_allowed_models) : null,
    accountProviders: row.account_allowed_providers ? new Set(row.account_allowed_providers) : null,
    guardrail: row.guardrail_id
      ? {
          id: row.guardrail_id,
          version: row.guardrail_updated_at?.getTime() ?? 0,
          allowedModels: row.guardrail_allowed_models
            ? new Set(row.guardrail_allowed_models)
            : null,
          budgetNano: row.guardrail_budget_nano ?? 0,
          filters: row.guardrail_filters ?? [],
        }
      : null,
    presets: new Map((row.presets ?? []).map((preset) => [preset.slug, preset])),
  }))
}
