/** The session itself: who it is (`GET /me`), switching account, signing out. */
import { Elysia } from 'elysia'
import { Done, Me, SwitchAccount } from '../../../shared/schemas/admin/session.ts'
import { ServiceError } from '../../../shared/errors.ts'
import {
  clearedSessionCookie,
  closeSession,
  sessionToken,
  switchSessionAccount,
} from '../../accounts/people/sessions.ts'
import type { AdminDeps } from './admin-deps.ts'
import { requireSession } from './admin-session.ts'

export function sessionRoutes(deps: AdminDeps) {
  return new Elysia()
    .get(
      '/me',
      async ({ request }): Promise<Me> => {
        const session = await requireSession(deps, request, 'read')
        const memberships = session.userId
          ? await deps.sql<{ accountId: string; role: Me['role'] }[]>`
              SELECT account_id AS "accountId", role FROM memberships WHERE user_id = ${session.userId} ORDER BY created_at`
          : [{ accountId: session.accountId, role: session.role }]
        const [suspension] =
          session.accountStatus === 'suspended'
            ? await deps.sql<{ reason: string | null }[]>`
                SELECT suspended_reason AS reason FROM accounts WHERE id = ${session.accountId}`
            : []
        return {
          account: {
            id: session.accountId,
            kind: session.accountKind,
            status: session.accountStatus,
            suspendedReason: suspension?.reason ?? null,
          },
          role: session.role,
          via: session.userId ? 'user' : 'link',
          user: session.userId
            ? { id: session.userId, email: session.email, wallet: session.wallet }
            : null,
          memberships: [...memberships],
        }
      },
      { response: Me, detail: { summary: 'The session: its account, role and user' } },
    )
    .put(
      '/session/account',
      async ({ request, body }) => {
        const session = await requireSession(deps, request, 'read')
        if (!(await switchSessionAccount(deps.sql, session, body.accountId)))
          throw new ServiceError('not_found', `No account ${body.accountId} among yours.`)
        return { ok: true as const }
      },
      {
        body: SwitchAccount,
        response: Done,
        detail: { summary: 'Act for another account the user is a member of' },
      },
    )
    .delete(
      '/session',
      async ({ request, set }) => {
        const token = sessionToken(request.headers.get('cookie'))
        if (token) await closeSession(deps.sql, token)
        set.headers['set-cookie'] = clearedSessionCookie()
        return { ok: true as const }
      },
      { response: Done, detail: { summary: 'Sign out' } },
    )
}
