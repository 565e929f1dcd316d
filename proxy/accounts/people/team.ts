/**
 * Teams: the members of an account with their roles (one owner, admins, members), invitations by e-mail,
 * role changes, removals and members leaving. Only accounts with an identity have teams: an accountless
 * account is reached by its bearer secrets alone, and must be claimed first. The owner stays the owner: it
 * cannot be removed, demoted or leave, and ownership is not transferable here (an operator can move it in
 * the database).
 */
import type { Sql, TransactionSql } from 'postgres'
import { ServiceError } from '../../../shared/errors.ts'
import type { InvitedRole, Team } from '../../../shared/schemas/admin/team.ts'
import type { Role, Session } from './sessions.ts'
import { latestMembership } from './users.ts'

export async function listTeam(sql: Sql, accountId: string, nowMs: number): Promise<Team> {
  const members = await sql<
    {
      user_id: string
      role: Role
      email: string | null
      wallet_address: string | null
      created_at: Date
    }[]
  >`
    SELECT m.user_id, m.role, u.email, u.wallet_address, m.created_at
    FROM memberships m JOIN users u ON u.id = m.user_id
    WHERE m.account_id = ${accountId}
    ORDER BY m.role = 'owner' DESC, m.created_at, m.user_id`
  const invites = await sql<{ email: string; role: InvitedRole; expires_at: Date }[]>`
    SELECT email, role, expires_at FROM email_tokens
    WHERE account_id = ${accountId} AND purpose = 'invite' AND consumed_at IS NULL AND expires_at > ${new Date(nowMs)}
    ORDER BY created_at`
  return {
    members: members.map((row) => ({
      userId: row.user_id,
      role: row.role,
      email: row.email,
      wallet: row.wallet_address,
      joinedAt: row.created_at.toISOString(),
    })),
    invites: invites.map((row) => ({
      email: row.email,
      role: row.role,
      expiresAt: row.expires_at.toISOString(),
    })),
  }
}

/** Refuses an invitation that cannot be accepted: an accountless account, or an address already in the team. */
export async function checkInvite(
  sql: Sql,
  accountId: string,
  accountKind: 'accountless' | 'identity',
  email: string,
): Promise<void> {
  if (accountKind === 'accountless') {
    throw new ServiceError(
      'forbidden',
      'An accountless account cannot have team members: claim it first with an e-mail address or a wallet (the Team page shows how).',
    )
  }
  const [member] = await sql`
    SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.account_id = ${accountId} AND u.email = ${email}`
  if (member)
    throw new ServiceError('conflict', `email: ${email} is already a member of this account`, {
      param: 'email',
    })
}

/** Accepting an invitation: the user joins with the invited role (a member already keeps the role it has). */
export async function joinTeam(
  tx: TransactionSql,
  accountId: string,
  userId: string,
  role: InvitedRole,
): Promise<void> {
  const [account] = await tx<{ kind: string }[]>`SELECT kind FROM accounts WHERE id = ${accountId}`
  if (!account) throw new ServiceError('not_found', `No account ${accountId}.`)
  await tx`INSERT INTO memberships (account_id, user_id, role) VALUES (${accountId}, ${userId}, ${role}) ON CONFLICT (account_id, user_id) DO NOTHING`
}

export async function changeRole(
  sql: Sql,
  accountId: string,
  userId: string,
  role: InvitedRole,
): Promise<void> {
  const current = await memberRole(sql, accountId, userId)
  if (current === 'owner')
    throw new ServiceError(
      'conflict',
      "The owner's role cannot be changed: ownership is not transferable.",
    )
  await sql`UPDATE memberships SET role = ${role} WHERE account_id = ${accountId} AND user_id = ${userId}`
}

/** Removes a member; their sessions for this account end at once (a session lasts only while its user is a member). */
export async function removeMember(sql: Sql, accountId: string, userId: string): Promise<void> {
  const current = await memberRole(sql, accountId, userId)
  if (current === 'owner')
    throw new ServiceError('conflict', 'The owner cannot be removed from the account.')
  await sql.begin((tx) => endMembership(tx, accountId, userId))
}

/**
 * The session's user leaves the session's account, as a removal would take them out: the membership, their
 * other sessions for the account and their browsers' credit alerts of it end. The account's keys stay (keys
 * belong to the account, not to whoever created them). This session moves on to the account a sign-in would
 * choose, their most recent remaining membership; with none left it ends too. Answers the account it acts
 * for now, or null when it ended.
 */
export async function leaveTeam(sql: Sql, session: Session): Promise<{ accountId: string | null }> {
  // A dashboard-link session acts as the owner, and has no user to take out either.
  if (session.role === 'owner' || !session.userId)
    throw new ServiceError(
      'conflict',
      'The owner cannot leave the account: it would have no owner, and ownership is not transferable here. Remove the other members instead, or write to support (the Support page) to have ownership moved to another member.',
    )
  const userId = session.userId
  return sql.begin(async (tx) => {
    const left = await endMembership(tx, session.accountId, userId, session.tokenHash)
    if (!left)
      throw new ServiceError('not_found', `You are no longer a member of ${session.accountId}.`)
    const next = await latestMembership(tx, userId)
    if (!next) {
      await tx`DELETE FROM sessions WHERE token_hash = ${session.tokenHash}`
      return { accountId: null }
    }
    await tx`UPDATE sessions SET account_id = ${next.accountId} WHERE token_hash = ${session.tokenHash}`
    return { accountId: next.accountId }
  })
}

/**
 * Takes a member (never the owner) out of an account: the membership, their sessions for it (but `keep`)
 * and the push subscriptions their browsers registered for its credit alerts. False when there was no such
 * member.
 */
async function endMembership(
  tx: TransactionSql,
  accountId: string,
  userId: string,
  keep?: Uint8Array,
): Promise<boolean> {
  const ended = await tx`
    DELETE FROM memberships WHERE account_id = ${accountId} AND user_id = ${userId} AND role <> 'owner' RETURNING 1`
  if (ended.length === 0) return false
  await tx`
    DELETE FROM sessions WHERE account_id = ${accountId} AND user_id = ${userId}
      AND token_hash IS DISTINCT FROM ${keep ?? null}`
  await tx`DELETE FROM push_subscriptions WHERE account_id = ${accountId} AND user_id = ${userId}`
  return true
}

/**
 * Withdraws the pending invitations of an address: they are spent, so their links answer as a used one
 * does ("This link cannot be used").
 */
export async function withdrawInvite(sql: Sql, accountId: string, email: string): Promise<void> {
  const withdrawn = await sql`
    UPDATE email_tokens SET consumed_at = now()
    WHERE account_id = ${accountId} AND purpose = 'invite' AND email = ${email} AND consumed_at IS NULL`
  if (withdrawn.count === 0)
    throw new ServiceError('not_found', `No pending invitation for ${email} in this account.`)
}

async function memberRole(sql: Sql, accountId: string, userId: string): Promise<Role> {
  const [row] = await sql<
    { role: Role }[]
  >`SELECT role FROM memberships WHERE account_id = ${accountId} AND user_id = ${userId}`
  if (!row) throw new ServiceError('not_found', `No member ${userId} in this account.`)
  return row.role
}
