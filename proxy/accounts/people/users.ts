/**
 * People: a user is an e-mail address or a wallet (both unique), found or created at sign-in, and the
 * account a signed-in user acts for. E-mail addresses are kept trimmed and lowercased; wallet addresses
 * lowercased (hex), so one person is one row however the address was typed or checksummed.
 */
import type { Sql, TransactionSql } from 'postgres'
import { ServiceError } from '../../../shared/errors.ts'
import { newAccountId, newUserId } from '../ids.ts'
import type { Role } from './sessions.ts'
import { endLinkSessions } from './accountless.ts'

export type Identity = { email: string } | { wallet: string }

type Db = Sql | TransactionSql

export const normalizeEmail = (email: string): string => email.trim().toLowerCase()
export const normalizeWallet = (address: string): string => address.toLowerCase()

/** The user with this identity, created when new (race-free: one INSERT … ON CONFLICT). */
export async function findOrCreateUser(sql: Db, identity: Identity): Promise<string> {
  const id = newUserId()
  const [row] =
    'email' in identity
      ? await sql<{ id: string }[]>`
          INSERT INTO users (id, email) VALUES (${id}, ${normalizeEmail(identity.email)})
          ON CONFLICT (email) DO UPDATE SET email = EXCLUDED.email RETURNING id`
      : await sql<{ id: string }[]>`
          INSERT INTO users (id, wallet_address) VALUES (${id}, ${normalizeWallet(identity.wallet)})
          ON CONFLICT (wallet_address) DO UPDATE SET wallet_address = EXCLUDED.wallet_address RETURNING id`
  return row!.id
}

/** The user's most recent membership: the account a session of theirs acts for when none is named. */
export async function latestMembership(
  sql: Db,
  userId: string,
): Promise<{ accountId: string; role: Role } | undefined> {
  const [membership] = await sql<{ account_id: string; role: Role }[]>`
    SELECT account_id, role FROM memberships WHERE user_id = ${userId} ORDER BY created_at DESC, account_id LIMIT 1`
  return membership && { accountId: membership.account_id, role: membership.role }
}

/**
 * The account a sign-in acts for: the user's most recent membership, or, for a user with none (new, or
 * removed from every team), a new account with an identity that the user owns.
 */
export async function accountForSignIn(
  tx: TransactionSql,
  userId: string,
): Promise<{ accountId: string; role: Role }> {
  const membership = await latestMembership(tx, userId)
  if (membership) return membership
  const accountId = newAccountId()
  await tx`INSERT INTO accounts (id, kind) VALUES (${accountId}, 'identity')`
  await tx`INSERT INTO memberships (account_id, user_id, role) VALUES (${accountId}, ${userId}, 'owner')`
  return { accountId, role: 'owner' }
}

/**
 * Claiming: the user becomes the owner of an accountless account, which becomes an account with an
 * identity. Keys, balance and the dashboard link are untouched. An account that has an identity already
 * → 409 conflict (a second claim cannot take it over).
 */
export async function attachIdentity(
  tx: TransactionSql,
  accountId: string,
  userId: string,
): Promise<void> {
  const [account] = await tx<
    { kind: string }[]
  >`SELECT kind FROM accounts WHERE id = ${accountId} FOR UPDATE`
  if (!account) throw new ServiceError('not_found', `No account ${accountId}.`)
  if (account.kind === 'identity')
    throw new ServiceError(
      'conflict',
      `Account ${accountId} already has an identity; it cannot be claimed again.`,
    )
  await tx`INSERT INTO memberships (account_id, user_id, role) VALUES (${accountId}, ${userId}, 'owner')`
  // Its people now sign in as themselves: the dashboard link, a bearer secret with owner power, ends.
  await tx`UPDATE accounts SET kind = 'identity', dashboard_link_hash = NULL WHERE id = ${accountId}`
  await endLinkSessions(tx, accountId)
}

/** 409 when the account already has an identity: checked before a claim mail is sent, and again at confirmation. */
export async function requireAccountless(sql: Db, accountId: string): Promise<void> {
  const [account] = await sql<{ kind: string }[]>`SELECT kind FROM accounts WHERE id = ${accountId}`
  if (!account) throw new ServiceError('not_found', `No account ${accountId}.`)
  if (account.kind === 'identity')
    throw new ServiceError(
      'conflict',
      `Account ${accountId} already has an identity; it cannot be claimed again.`,
    )
}
