/**
 * Opening the session a sign-in earned (dashboard link, setup, e-mail link, wallet): a new session in the
 * database, its HttpOnly/Secure/SameSite cookie on the response, and what the dashboard needs to know of it.
 */
import type { SignedIn } from '../../../shared/schemas/admin/sign-in.ts'
import { ServiceError } from '../../../shared/errors.ts'
import {
  closeSession,
  openSession,
  readSession,
  sessionCookie,
} from '../../accounts/people/sessions.ts'
import type { AdminDeps } from './admin-deps.ts'

export async function startSession(
  deps: AdminDeps,
  set: { headers: Record<string, string | number> },
  owner: { accountId: string; userId: string | null },
  purpose: SignedIn['purpose'],
): Promise<SignedIn> {
  const { token, expiresAt } = await openSession(
    deps.sql,
    owner,
    deps.config.SESSION_TTL_MS,
    deps.clock.now(),
  )
  const session = await readSession(deps.sql, token, deps.clock.now())
  // A dashboard link exchanged while its account was being claimed: the claim ended the link.
  if (!session) {
    await closeSession(deps.sql, token)
    throw new ServiceError(
      'unauthorized',
      'This account was just claimed: its dashboard link has ended. Sign in with its e-mail address or wallet.',
    )
  }
  set.headers['set-cookie'] = sessionCookie(token, expiresAt)
  set.headers['cache-control'] = 'no-store'
  return {
    account: { id: session.accountId, kind: session.accountKind },
    role: session.role,
    user: session.userId
      ? { id: session.userId, email: session.email, wallet: session.wallet }
      : null,
    purpose,
  }
}
