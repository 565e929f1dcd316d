/**
 * Reading the session of an admin request: the cookie's session (401 without one), then the permission
 * check for what the route does. Writes are also checked for their origin (see csrf.ts) before any route.
 */
import { ServiceError } from '../../../shared/errors.ts'
import { readSession, sessionToken, type Session } from '../../accounts/people/sessions.ts'
import type { AdminDeps } from './admin-deps.ts'
import { authorize, type Action } from '../../accounts/permissions.ts'

/** The session the request's cookie opens, if any. */
export async function currentSession(
  deps: AdminDeps,
  request: Request,
): Promise<Session | undefined> {
  const token = sessionToken(request.headers.get('cookie'))
  return token ? readSession(deps.sql, token, deps.clock.now()) : undefined
}

export async function requireSession(
  deps: AdminDeps,
  request: Request,
  action: Action,
): Promise<Session> {
  const session = await currentSession(deps, request)
  if (!session)
    throw new ServiceError('unauthorized', 'Sign in first (or open your dashboard link).')
  authorize(session, action)
  return session
}
