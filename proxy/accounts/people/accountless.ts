/**
 * Accountless accounts: created with no identity and no credit, one API key (with the accountless
 * default spend caps) and a dashboard link. Both are bearer secrets shown once; the top-up step is offered
 * only after the owner confirms having saved both, because nothing can recover such an account when they
 * are lost. The link can be replaced (a new secret, the old one and its other sessions end) or revoked;
 * claiming the account revokes it, since its people then sign in as themselves.
 */
import { ServiceError } from '../../../shared/errors.ts'
import type { Sql, TransactionSql } from 'postgres'
import { newAccountId } from '../ids.ts'
import { createKey } from '../keys.ts'
import type { OperatorDeps } from '../operator-deps.ts'
import { hashSecret, newSecret } from './secrets.ts'

export const NO_RECOVERY_WARNING =
  'This account has no e-mail address or wallet: the API key and the dashboard link are its only credentials. ' +
  'If both are lost, nobody (not even support) can recover the account or its balance. Save both now; ' +
  'attach an e-mail address or a wallet later to get recovery (the Team page shows how to claim the account).'

export async function createAccountless(
  deps: OperatorDeps,
): Promise<{ accountId: string; keyId: string; key: string; linkSecret: string }> {
  const accountId = newAccountId()
  const linkSecret = newSecret()
  await deps.sql`INSERT INTO accounts (id, kind, dashboard_link_hash) VALUES (${accountId}, 'accountless', ${hashSecret(linkSecret)})`
  const key = await createKey(deps, accountId, { name: 'default' })
  return { accountId, keyId: key.id, key: key.key, linkSecret }
}

/** The account a dashboard link opens (it survives key rotation), or undefined. */
export async function accountByLink(sql: Sql, secret: string): Promise<string | undefined> {
  const [row] = await sql<
    { id: string }[]
  >`SELECT id FROM accounts WHERE dashboard_link_hash = ${hashSecret(secret)}`
  return row?.id
}

/**
 * A new dashboard link for an accountless account: the old secret stops working and the sessions it
 * opened end, except `keepSession` (the owner's own, when the owner asks from the dashboard).
 */
export async function replaceLink(
  sql: Sql,
  accountId: string,
  keepSession?: Uint8Array,
): Promise<string> {
  const secret = newSecret()
  await sql.begin(async (tx) => {
    const [account] = await tx<
      { kind: string }[]
    >`SELECT kind FROM accounts WHERE id = ${accountId} FOR UPDATE`
    if (!account) throw new ServiceError('not_found', `No account ${accountId}.`)
    if (account.kind === 'identity')
      throw new ServiceError(
        'conflict',
        `Account ${accountId} has an identity: its people sign in with it, and it has no dashboard link.`,
      )
    await tx`UPDATE accounts SET dashboard_link_hash = ${hashSecret(secret)} WHERE id = ${accountId}`
    await endLinkSessions(tx, accountId, keepSession)
  })
  return secret
}

/** Revokes the dashboard link: it opens nothing, and the sessions it opened end (except `keepSession`). */
export async function revokeLink(
  sql: Sql,
  accountId: string,
  keepSession?: Uint8Array,
): Promise<void> {
  await sql.begin(async (tx) => {
    const rows =
      await tx`UPDATE accounts SET dashboard_link_hash = NULL WHERE id = ${accountId} RETURNING id`
    if (rows.length === 0) throw new ServiceError('not_found', `No account ${accountId}.`)
    await endLinkSessions(tx, accountId, keepSession)
  })
}

/** Ends the sessions a dashboard link opened (they have no user). */
export async function endLinkSessions(
  sql: Sql | TransactionSql,
  accountId: string,
  keep?: Uint8Array,
): Promise<void> {
  await sql`DELETE FROM sessions WHERE account_id = ${accountId} AND user_id IS NULL ${keep ? sql`AND token_hash <> ${keep}` : sql``}`
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
