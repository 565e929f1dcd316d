/**
 * Browser sessions of the site: an opaque token in an HttpOnly cookie, stored as its sha256. A session
 * acts for one account: a link session (opened with an accountless account's dashboard link) as its
 * owner; a user session (e-mail or wallet sign-in) with the user's role in that account.
 */
import type { Sql } from 'postgres'
import { hashSecret, newSecret } from './secrets.ts'

export const SESSION_COOKIE = 'svc_session'

export type Role = 'owner' | 'admin' | 'member'

export type Session = {
  tokenHash: Uint8Array
  accountId: string
  accountKind: 'accountless' | 'identity'
  accountStatus: 'active' | 'suspended'
  /** Null for a session opened with a dashboard link. */
  userId: string | null
  email: string | null
  wallet: string | null
  role: Role
  expiresAtMs: number
}

export async function openSession(
  sql: Sql,
  owner: { accountId: string; userId: string | null },
  ttlMs: number,
  nowMs: number,
) {
  const token = newSecret()
  const expiresAt = new Date(nowMs + ttlMs)
  await sql`
    INSERT INTO sessions (token_hash, account_id, user_id, expires_at)
    VALUES (${hashSecret(token)}, ${owner.accountId}, ${owner.userId}, ${expiresAt})`
  return { token, expiresAt }
}

type Row = {
  account_id: string
  kind: Session['accountKind']
  status: Session['accountStatus']
  user_id: string | null
  email: string | null
  wallet_address: string | null
  role: Role | null
  expires_at: Date
}

/**
 * The session of a cookie token, or undefined when it is unknown, expired, its user left the account, or
 * it is a dashboard-link session of an account that has been claimed.
 */
export async function readSession(
  sql: Sql,
  token: string,
  nowMs: number,
): Promise<Session | undefined> {
  const tokenHash = hashSecret(token)
  const [row] = await sql<Row[]>`
    SELECT s.account_id, a.kind, a.status, s.user_id, u.email, u.wallet_address, m.role, s.expires_at
    FROM sessions s
    JOIN accounts a ON a.id = s.account_id
    LEFT JOIN users u ON u.id = s.user_id
    LEFT JOIN memberships m ON m.account_id = s.account_id AND m.user_id = s.user_id
    WHERE s.token_hash = ${tokenHash}`
  if (!row || row.expires_at.getTime() <= nowMs) return undefined
  // A user session lasts only while the user is a member. A link session acts as the owner while the
  // account is accountless: it survives key rotation, not a claim, after which people sign in as
  // themselves (also one a link exchange racing the claim opened after the claim ended the others).
  if (row.user_id && !row.role) return undefined
  if (!row.user_id && row.kind === 'identity') return undefined
  return {
    tokenHash,
    accountId: row.account_id,
    accountKind: row.kind,
    accountStatus: row.status,
    userId: row.user_id,
    email: row.email,
    wallet: row.wallet_address,
    role: row.role ?? 'owner',
    expiresAtMs: row.expires_at.getTime(),
  }
}

export async function closeSession(sql: Sql, token: string): Promise<void> {
  await sql`DELETE FROM sessions WHERE token_hash = ${hashSecret(token)}`
}

/** Moves a user's session to another account the user is a member of. */
export async function switchSessionAccount(
  sql: Sql,
  session: Session,
  accountId: string,
): Promise<boolean> {
  if (!session.userId) return false
  const rows = await sql`
    UPDATE sessions s SET account_id = ${accountId}
    FROM memberships m
    WHERE s.token_hash = ${session.tokenHash} AND m.account_id = ${accountId} AND m.user_id = ${session.userId}
    RETURNING 1`
  return rows.length > 0
}

/** Set-Cookie for a session: HttpOnly, Secure, SameSite=Lax, the whole site. */
export function sessionCookie(token: string, expiresAt: Date): string {
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; Secure; SameSite=Lax; Expires=${expiresAt.toUTCString()}`
}

export function clearedSessionCookie(): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=0`
}

/** The session token in a Cookie header. */
export function sessionToken(cookieHeader: string | null): string | undefined {
  if (!cookieHeader) return undefined
  for (const part of cookieHeader.split(';')) {
    const [name, ...value] = part.trim().split('=')
    if (name === SESSION_COOKIE) return value.join('=') || undefined
  }
  return undefined
}
