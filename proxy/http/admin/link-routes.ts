/**
 * The dashboard link → a session: the page reads the secret from the URL fragment (never sent to a
 * server, so never in a log or a Referer) and POSTs it here. The link works until it is replaced or
 * revoked (its owner, here; the operator, in the operator API) or the account is claimed; key rotation
 * leaves it alone. A wrong secret is 401, counted per client address (429 past the limit), so links
 * cannot be guessed at speed.
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
import { requireSession } from './admin-session.ts'
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
        const session = await requireSession(deps, request, 'billing')
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
        const session = await requireSession(deps, request, 'billing')
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
