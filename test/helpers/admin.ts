/**
 * Calling the admin API as a browser would: a session cookie opened directly in the database (sign-in
 * itself has its own tests), same-origin `Origin` on writes.
 */
import { newUserId } from '../../proxy/accounts/ids.ts'
import { openSession, SESSION_COOKIE, type Role } from '../../proxy/accounts/people/sessions.ts'
import type { TestGateway } from './gateway.ts'

export const SITE = 'http://site.test'

/** A session cookie for the account: a dashboard-link session, or a user's with that role (the user is made a member). */
export async function sessionFor(
  gw: TestGateway,
  accountId: string,
  role?: Role,
  email?: string,
): Promise<{ cookie: string; userId: string | null }> {
  const { sql, clock } = gw.app.operator
  let userId: string | null = null
  if (role) {
    userId = newUserId()
    await sql`INSERT INTO users (id, email) VALUES (${userId}, ${email ?? `${userId}@people.test`})`
    await sql`INSERT INTO memberships (account_id, user_id, role) VALUES (${accountId}, ${userId}, ${role})`
  }
  const { token } = await openSession(sql, { accountId, userId }, 3_600_000, clock.now())
  return { cookie: `${SESSION_COOKIE}=${token}`, userId }
}

/** A request to the site server with the cookie; writes carry the site's own Origin unless `origin` says otherwise. */
export function admin(
  gw: TestGateway,
  method: string,
  path: string,
  options: { cookie?: string; body?: unknown; origin?: string | null } = {},
): Promise<Response> {
  const headers: Record<string, string> = {}
  if (options.cookie) headers.cookie = options.cookie
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  const origin = options.origin === undefined ? (method === 'GET' ? null : SITE) : options.origin
  if (origin) headers.origin = origin
  return gw.app.site.handle(
    new Request(`${SITE}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    }),
  )
}
