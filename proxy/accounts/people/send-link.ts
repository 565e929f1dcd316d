/**
 * Sending an e-mailed link (sign-in, claim, invite): the per-recipient limit, a new single-use token, and
 * the mail through the configured mailer (SMTP, or the outbox under DATA_DIR).
 */
import type { Sql } from 'postgres'
import type { AddressLimiter } from '../../stores/address-limits.ts'
import { countAttempt, recipientKey } from './attempts.ts'
import { issueEmailToken, type TokenRequest } from './email-tokens.ts'
import type { Mailer } from './mailer.ts'
import { linkMail } from './mails.ts'
import { emailLink } from './site-url.ts'

export type LinkDeps = {
  sql: Sql
  mailer: Mailer
  limiter: AddressLimiter
  clock: { now(): number }
  config: { MAGIC_LINK_TTL_MS: number; MAILS_PER_RECIPIENT_PER_MINUTE: number }
}

export async function sendLink(
  deps: LinkDeps,
  request: TokenRequest,
  siteBase: string,
  /** `next`: the dashboard page a sign-in lands on; `invitedBy`: who sent an invite (e-mail or wallet). */
  extra: { next?: string; invitedBy?: string } = {},
): Promise<{ expiresAt: Date }> {
  await countAttempt(
    deps.limiter,
    'mail-recipient',
    recipientKey(request.email),
    deps.config.MAILS_PER_RECIPIENT_PER_MINUTE,
    'mails to this address',
  )
  const ttlMs = deps.config.MAGIC_LINK_TTL_MS
  const { token, expiresAt } = await issueEmailToken(deps.sql, request, ttlMs, deps.clock.now())
  await deps.mailer.send(
    linkMail({
      to: request.email,
      purpose: request.purpose,
      link: emailLink(siteBase, token, extra.next),
      ttlMs,
      accountId: request.accountId,
      role: request.role,
      invitedBy: extra.invitedBy,
    }),
  )
  return { expiresAt }
}
