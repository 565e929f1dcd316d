/**
 * The account's team: every member reads it; inviting (and withdrawing an invitation), changing roles and
 * removing are the owner's (`team`). Invites are e-mailed links; accepting one is confirming it (the invited address signs in,
 * becoming a user if new, and joins with the invited role). Any member but the owner may leave, also while
 * the account is suspended. Accountless accounts have no team until claimed. The owner cannot be removed,
 * demoted or leave; ownership transfer is not offered.
 */
import { Elysia } from 'elysia'
import { Done } from '../../../shared/schemas/admin/session.ts'
import { MailSent } from '../../../shared/schemas/admin/sign-in.ts'
import {
  Invite,
  InviteParams,
  Left,
  MemberParams,
  RoleChange,
  Team,
} from '../../../shared/schemas/admin/team.ts'
import { addressTrust, clientAddress } from '../client-address.ts'
import { countAttempt } from '../../accounts/people/attempts.ts'
import { sendLink } from '../../accounts/people/send-link.ts'
import { siteBase } from '../../accounts/people/site-url.ts'
import {
  changeRole,
  checkInvite,
  leaveTeam,
  listTeam,
  removeMember,
  withdrawInvite,
} from '../../accounts/people/team.ts'
import { clearedSessionCookie } from '../../accounts/people/sessions.ts'
import { normalizeEmail } from '../../accounts/people/users.ts'
import type { AdminDeps } from './admin-deps.ts'
import { requireSession } from './admin-session.ts'

export function teamRoutes(deps: AdminDeps) {
  const trust = addressTrust(deps.config)
  return new Elysia()
    .get(
      '/team',
      async ({ request }) => {
        const session = await requireSession(deps, request, 'read')
        return listTeam(deps.sql, session.accountId, deps.clock.now())
      },
      {
        response: Team,
        detail: { summary: 'Members of the account with their roles, and pending invites' },
      },
    )
    .post(
      '/team/invites',
      async ({ request, server, body, set }) => {
        const session = await requireSession(deps, request, 'team')
        const email = normalizeEmail(body.email)
        await checkInvite(deps.sql, session.accountId, session.accountKind, email)
        await countAttempt(
          deps.limiter,
          'sign-in-mail',
          clientAddress(server, request, trust),
          deps.config.SIGN_IN_ATTEMPTS_PER_MINUTE,
          'mails requested from this address',
        )
        await sendLink(
          deps,
          { email, purpose: 'invite', accountId: session.accountId, role: body.role },
          siteBase(deps.config.PUBLIC_SITE_URL, request),
          { invitedBy: session.email ?? session.wallet ?? undefined },
        )
        set.status = 202
        return {
          ok: true as const,
          message: `An invitation to join as ${body.role} was sent to ${email}.`,
        }
      },
      {
        body: Invite,
        response: { 202: MailSent },
        detail: { summary: 'Invite someone by e-mail as admin or member (owner only)' },
      },
    )
    .delete(
      '/team/invites/:email',
      async ({ request, params }) => {
        const session = await requireSession(deps, request, 'team')
        await withdrawInvite(deps.sql, session.accountId, normalizeEmail(params.email))
        return { ok: true as const }
      },
      {
        params: InviteParams,
        response: Done,
        detail: { summary: 'Withdraw the pending invitations of an address (owner only)' },
      },
    )
    .post(
      '/team/leave',
      async ({ request, set }) => {
        const session = await requireSession(deps, request, 'read')
        const left = await leaveTeam(deps.sql, session)
        if (left.accountId === null) set.headers['set-cookie'] = clearedSessionCookie()
        return { ok: true as const, accountId: left.accountId }
      },
      {
        response: Left,
        detail: {
          summary:
            "Leave the session's account (any member but the owner); the session moves to the most recent other membership, or ends",
        },
      },
    )
    .patch(
      '/team/:userId',
      async ({ request, params, body }) => {
        const session = await requireSession(deps, request, 'team')
        await changeRole(deps.sql, session.accountId, params.userId, body.role)
        return { ok: true as const }
      },
      {
        params: MemberParams,
        body: RoleChange,
        response: Done,
        detail: { summary: "Change a member's role (owner only)" },
      },
    )
    .delete(
      '/team/:userId',
      async ({ request, params }) => {
        const session = await requireSession(deps, request, 'team')
        await removeMember(deps.sql, session.accountId, params.userId)
        return { ok: true as const }
      },
      {
        params: MemberParams,
        response: Done,
        detail: {
          summary: 'Remove a member; their sessions for this account end at once (owner only)',
        },
      },
    )
}
