/**
 * Loads an account's hot state from Postgres into the admission store when the store has none (a new
 * account, a restart of the in-process store, or an emptied Redis). The balance and the IDs of recent
 * credits come from one snapshot; credits committed after it are applied afterwards, once each, so a
 * credit racing a load is neither lost nor counted twice.
 */
import type { Sql } from 'postgres'
import type { AccountSeed, AccountSnapshot, AdmissionStore } from './store.ts'

export async function readAccountSeed(sql: Sql, accountId: string): Promise<AccountSeed> {
  const [row] = await sql<
    {
      balance: number
      credits: string[]
      keys: { key_id: string; day: number; month: number }[]
      guardrails: { guardrail_id: string; month: number }[]
    }[]
  >`
    WITH entries AS (SELECT * FROM ledger WHERE account_id = ${accountId}),
    by_key AS (
      SELECT key_id,
             coalesce(sum(-amount_nano) FILTER (WHERE created_at >= date_trunc('day', now(), 'UTC')), 0)::bigint AS day,
             coalesce(sum(-amount_nano), 0)::bigint AS month
      FROM entries
      WHERE kind = 'charge' AND key_id IS NOT NULL AND created_at >= date_trunc('month', now(), 'UTC')
      GROUP BY key_id
    ),
    -- A key's spend windows are its rotation lineage's: the keys it was rotated from count in them.
    spend AS (
      SELECT k.limits_key_id AS key_id, sum(by_key.day)::bigint AS day, sum(by_key.month)::bigint AS month
      FROM by_key JOIN api_keys k ON k.id = by_key.key_id
      GROUP BY k.limits_key_id
    ),
    guardrail_spend AS (
      SELECT k.guardrail_id, sum(by_key.month)::bigint AS month
      FROM by_key JOIN api_keys k ON k.id = by_key.key_id
      WHERE k.guardrail_id IS NOT NULL
      GROUP BY k.guardrail_id
    )
    SELECT
      (SELECT coalesce(sum(amount_nano), 0)::bigint FROM entries) AS balance,
      (SELECT coalesce(array_agg(request_id), '{}') FROM entries WHERE kind IN ('credit', 'adjustment') AND created_at > now() - interval '2 days') AS credits,
      (SELECT coalesce(json_agg(spend), '[]') FROM spend) AS keys,
      (SELECT coalesce(json_agg(guardrail_spend), '[]') FROM guardrail_spend) AS guardrails`
  return {
    balanceNano: row!.balance,
    recentCreditIds: row!.credits,
    keySpend: row!.keys.map((key) => ({
      keyId: key.key_id,
      daySpentNano: Number(key.day),
      monthSpentNano: Number(key.month),
    })),
    // A guardrail's spend is rebuilt from the keys assigned to it now.
    guardrailSpend: row!.guardrails.map((g) => ({
      guardrailId: g.guardrail_id,
      monthSpentNano: Number(g.month),
    })),
  }
}

const loading = new Map<string, Promise<void>>()

/** The account's live state, loaded from Postgres first when the store has none. */
export async function liveSnapshot(
  sql: Sql,
  store: AdmissionStore,
  accountId: string,
): Promise<AccountSnapshot> {
  const snapshot = await store.snapshot(accountId)
  if (snapshot.loaded) return snapshot
  await loadAccount(sql, store, accountId)
  return store.snapshot(accountId)
}

/** Seeds the account unless it is loaded; concurrent callers in this process share one load. */
export function loadAccount(sql: Sql, store: AdmissionStore, accountId: string): Promise<void> {
  let pending = loading.get(accountId)
  if (!pending) {
    pending = (async () => {
      await store.seed(accountId, await readAccountSeed(sql, accountId))
      const recent = await sql<{ request_id: string; amount_nano: number }[]>`
        SELECT request_id, amount_nano FROM ledger
        WHERE account_id = ${accountId} AND kind IN ('credit', 'adjustment') AND created_at > now() - interval '1 day'`
      for (const credit of recent)
        await store.credit(accountId, credit.request_id, credit.amount_nano)
    })().finally(() => loading.delete(accountId))
    loading.set(accountId, pending)
  }
  return pending
}
