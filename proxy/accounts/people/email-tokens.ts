/**
 * E-mailed links (sign-in, claim, team invite): a random token, stored only as its sha256 with its
 * purpose and expiry, and consumed once. Reading a token (the confirm page a mail scanner may fetch)
 * never consumes it; consuming is one UPDATE that only an unconsumed, unexpired row passes, so of two
 * concurrent confirmations exactly one wins.
 */
import type { Sql, TransactionSql } from 'postgres'
import { hashSecret, newSecret } from './secrets.ts'

export type TokenPurpose = 'sign_in' | 'claim' | 'invite'

export type EmailToken = {
  email: string
  purpose: TokenPurpose
  accountId: string | null
  role: 'admin' | 'member' | null
  expiresAt: Date
}

export type TokenRequest = {
  email: string
  purpose: TokenPurpose
  accountId?: string
  role?: 'admin' | 'member'
}

export async function issueEmailToken(
  sql: Sql,
  request: TokenRequest,
  ttlMs: number,
  nowMs: number,
): Promise<{ token: string; expiresAt: Date }> {
  const token = newSecret()
  const expiresAt = new Date(nowMs + ttlMs)
  // Rows past their expiry are of no use to anyone; dropping them here keeps the table small.
  await sql`DELETE FROM email_tokens WHERE expires_at <= ${new Date(nowMs)}`
  await sql`
    INSERT INTO email_tokens (token_hash, email, purpose, account_id, role, expires_at)
    VALUES (${hashSecret(token)}, ${request.email}, ${request.purpose}, ${request.accountId ?? null}, ${request.role ?? null}, ${expiresAt})`
  return { token, expiresAt }
}

type Row = {
  email: string
  purpose: TokenPurpose
  account_id: string | null
  role: EmailToken['role']
  expires_at: Date
}

const view = (row: Row): EmailToken => ({
  email: row.email,
  purpose: row.purpose,
  accountId: row.account_id,
  role: row.role,
  expiresAt: row.expires_at,
})

/** The token if it is still usable, without consuming it. */
export async function peekEmailToken(
  sql: Sql,
  token: string,
  nowMs: number,
): Promise<EmailToken | undefined> {
  const [row] = await sql<Row[]>`
    SELECT email, purpose, account_id, role, expires_at FROM email_tokens
    WHERE token_hash = ${hashSecret(token)} AND consumed_at IS NULL AND expires_at > ${new Date(nowMs)}`
  return row && view(row)
}

/** Consumes the token: its fields, or undefined when it is unknown, used or expired. */
export async function consumeEmailToken(
  tx: TransactionSql,
  token: string,
  nowMs: number,
): Promise<EmailToken | undefined> {
  const now = new Date(nowMs)
  const [row] = await tx<Row[]>`
    UPDATE email_tokens SET consumed_at = ${now}
    WHERE token_hash = ${hashSecret(token)} AND consumed_at IS NULL AND expires_at > ${now}
    RETURNING email, purpose, account_id, role, expires_at`
  return row && view(row)
}
