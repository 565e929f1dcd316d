/**
 * The dashboard link → a session: the page reads the secret from the URL fragment (never sent to a
 * server, so never in a log or a Referer) and POSTs it here. The link works for the account's lifetime:
 * after key rotation and after the account is claimed. A wrong secret is 401, counted per client address
 * (429 past the limit), so links cannot be guessed at speed.
 */
import { Elysia } from 'elysia'
import { ServiceError } from '../../../shared/errors.ts'
import { LinkExchange } from '../../../shared/schemas/admin/setup.ts'
import { SignedIn } from '../../../shared/schemas/admin/sign-in.ts'
import { addressTrust, clientAddress } from '../client-address.ts'
import { accountByLink } from '../../accounts/people/accountless.ts'
import { countAttempt } from '../../accounts/people/attempts.ts'
import type { AdminDeps } from './admin-deps.ts'
import { startSession } from './sign-in-session.ts'

export function linkRoutes(deps: AdminDeps) {
  const trust = addressTrust(deps.config)
  return new Elysia().post(
    '/session/link',
    async ({ request, server, body, set }) => {
      const accountId = await accountByLink(deps.sql, body.secret)
      if (!accountId) {
        await countAttempt(deps.limiter, 'dashboard-link', clientAddress(server, request, trust), deps.config.SIGN_IN_ATTEMPTS_PER_MINUTE, 'wrong dashboard links from this address')
        throw new ServiceError('unauthorized', 'secret: this dashboard link is not valid. Check that the whole link was copied.', { param: 'secret' })
      }
      return startSession(deps, set, { accountId, userId: null }, 'link')
    },
    { body: LinkExchange, response: SignedIn, detail: { summary: 'Exchange a dashboard link’s secret (from its #link= fragment) for a session cookie' } },
  )
}
