/**
 * Accountless accounts: created with no identity and no credit, one API key (with the accountless
 * default spend caps) and a permanent dashboard link. Both are bearer secrets shown once; the top-up step
 * is offered only after the owner confirms having saved both, because nothing can recover such an
 * account when they are lost.
 */
import type { Sql } from 'postgres'
import { newAccountId } from '../ids.ts'
import { createKey } from '../keys.ts'
import type { OperatorDeps } from '../operator-deps.ts'
import { hashSecret, newSecret } from './secrets.ts'

export const NO_RECOVERY_WARNING =
  'This account has no e-mail address or wallet: the API key and the dashboard link are its only credentials. ' +
  'If both are lost, nobody (not even support) can recover the account or its balance. Save both now; ' +
  'attach an e-mail address or a wallet later (POST /me/claim) to get recovery.'

export async function createAccountless(deps: OperatorDeps): Promise<{ accountId: string; keyId: string; key: string; linkSecret: string }> {
  const accountId = newAccountId()
  const linkSecret = newSecret()
  await deps.sql`INSERT INTO accounts (id, kind, dashboard_link_hash) VALUES (${accountId}, 'accountless', ${hashSecret(linkSecret)})`
  const key = await createKey(deps, accountId, { name: 'default' })
  return { accountId, keyId: key.id, key: key.key, linkSecret }
}

/** The account a dashboard link opens (it survives key rotation and claiming), or undefined. */
export async function accountByLink(sql: Sql, secret: string): Promise<string | undefined> {
  const [row] = await sql<{ id: string }[]>`SELECT id FROM accounts WHERE dashboard_link_hash = ${hashSecret(secret)}`
  return row?.id
}

/** Records that the owner saved both secrets (the first confirmation counts); returns when. */
export async function confirmSecrets(sql: Sql, accountId: string, nowMs: number): Promise<Date> {
  const [row] = await sql<{ at: Date }[]>`
    UPDATE accounts SET secrets_confirmed_at = coalesce(secrets_confirmed_at, ${new Date(nowMs)})
    WHERE id = ${accountId} RETURNING secrets_confirmed_at AS at`
  return row!.at
}

/**
 * Whether the account may be offered the top-up step (or a payment address): an accountless account only
 * after its owner confirmed saving both secrets; an account with an identity always (it has recovery).
 */
export async function secretsConfirmed(sql: Sql, accountId: string): Promise<boolean> {
  const [row] = await sql<{ ok: boolean }[]>`
    SELECT kind = 'identity' OR secrets_confirmed_at IS NOT NULL AS ok FROM accounts WHERE id = ${accountId}`
  return row?.ok ?? false
}
