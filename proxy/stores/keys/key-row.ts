/**
 * A row of `api_keys` as the service reads it: the one shape every reader of keys starts from (the key
 * operations, rotation, the playground key, the hot path's key record). `key_hash` is not in it: only
 * the key record's loader reads the digest, and adds it by name.
 */
export type KeyRow = {
  id: string
  account_id: string
  name: string
  prefix: string
  status: 'active' | 'revoked'
  /** End of the rotation grace; null for a key never rotated. */
  expires_at: Date | null
  replaced_by: string | null
  /** The first key of its rotation lineage, whose rates, concurrency and spend it shares. */
  limits_key_id: string
  rpm_limit: number | null
  tpm_limit: number | null
  concurrency_limit: number | null
  daily_limit_nano: number | null
  monthly_limit_nano: number | null
  allowed_models: string[] | null
  guardrail_id: string | null
  created_at: Date
  last_used_at: Date | null
  revoked_at: Date | null
}
