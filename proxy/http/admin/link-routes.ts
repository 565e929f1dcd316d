/**
 * The dashboard link → a session: the page reads the secret from the URL fragment (never sent to a
 * server, so never in a log or a Referer) and POSTs it here. The link works until it is replaced or
 * revoked (its owner, here; the operator, in the operator API) or the account is claimed; key rotation
 * leaves it alone. A wrong secret is 401, counted per client address (429 past the limit), so links
 * cannot be guessed at speed. A browser signed in to another account is not switched by a link (409): a
 * link someone sent would otherwise move its user, and the tabs they have open, into that account unnoticed.
 */
import { Elysia } from 'elysia'
import { ServiceError } from '../../../shared/errors.ts'
import { LinkExchange, ReplacedLink, RevokedLink } from '../../../shared/schemas/admin/setup.ts'
import { SignedIn } from '../../../shared/schemas/admin/sign-in.ts'
import { addressTrust, clientAddress } from '../client-address.ts'
import { accountByLink, replaceLink, revokeLink } from '../../accounts/people/accountless.ts'
import { dashboardLink, siteBase } from '../../accounts/people/site-url.ts'
import { countAttempt } from '../../accounts/people/attempts.ts'
import type { AdminDeps } from './admin-deps.ts'
import { currentSession, requireSession } from './admin-session.ts'
import { startSession } from './sign-in-session.ts'

export function linkRoutes(deps: AdminDeps) {
  const trust = addressTrust(deps.config)
  return new Elysia()
    .post(
      '/session/link',
      async ({ request, server, body, set }) => {
        const accountId = await accountByLink(deps.sql, body.secret)
        if (!accountId) {
          await countAttempt(
            deps.limiter,
            'dashboard-link',
            clientAddress(server, request, trust),
            deps.config.SIGN_IN_ATTEMPTS_PER_MINUTE,
            'wrong dashboard links from this address',
          )
          throw new ServiceError(
            'unauthorized',
            'secret: this dashboard link is not valid. Check that the whole link was copied.',
            { param: 'secret' },
          )
        }
        await refuseOtherAccountSession(deps, request, accountId)
        return startSession(deps, set, { accountId, userId: null }, 'link')
      },
      {
        body: LinkExchange,
        response: SignedIn,
        detail: {
          summary:
            'Exchange a dashboard link’s secret (from its #link= fragment) for a session cookie',
        },
      },
    )
    .post(
      '/account/link',
      async ({ request }) => {
        const session = await requireSession(deps, request, 'link')
        const secret = await replaceLink(deps.sql, session.accountId, session.tokenHash)
        return {
          accountId: session.accountId,
          dashboardLink: dashboardLink(siteBase(deps.config.PUBLIC_SITE_URL, request), secret),
        }
      },
      {
        response: ReplacedLink,
        detail: {
          summary:
            'Replace the dashboard link (owner): the new link is shown once; the old one and the sessions it opened end, except this one',
        },
      },
    )
    .delete(
      '/account/link',
      async ({ request }) => {
        const session = await requireSession(deps, request, 'link')
        await revokeLink(deps.sql, session.accountId, session.tokenHash)
        return { accountId: session.accountId, revoked: true as const }
      },
      {
        response: RevokedLink,
        detail: {
          summary:
            'Revoke the dashboard link (owner): it opens nothing any more; other sessions it opened end',
        },
      },
    )
}

/**
 * Refuses to open a link's account in a browser whose session acts for another one: what its user did
 * next (a key, a ticket, a card top-up) would be that account's. Signing out first makes the switch theirs.
 */
async function refuseOtherAccountSession(
  deps: AdminDeps,
  request: Request,
  accountId: string,
): Promise<void> {
  const current = await currentSession(deps, request)
  if (!current || current.accountId === accountId) return
  const who = current.email ?? current.wallet
  throw new ServiceError(
    'conflict',
    `This browser is signed in to account ${current.accountId}${who ? ` as ${who}` : ''}: sign out first, then open the dashboard link again.`,
  )
}
