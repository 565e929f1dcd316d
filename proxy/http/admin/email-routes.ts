/**
 * E-mail sign-in by magic link. `POST /auth/email` sends a single-use link and always answers 202 the
 * same way, whether or not the address has an account (no enumeration: an unknown address simply gets
 * an account when the link is confirmed). The link opens a confirm page (GET, which never consumes: mail
 * scanners fetch links); its button POSTs to `/auth/email/confirm`, which consumes the token and opens the
 * session: for a sign-in, a claim or a team invite alike. A form POST is answered with a redirect to the
 * dashboard page the sign-in was asked from (or an HTML page naming the refusal); a JSON POST with JSON.
 */
import { Elysia } from 'elysia'
import { dashboardPath } from '../../../shared/dashboard-path.ts'
import { ServiceError } from '../../../shared/errors.ts'
import {
  EmailConfirm,
  EmailSignIn,
  MailSent,
  SignedIn,
} from '../../../shared/schemas/admin/sign-in.ts'
import { addressTrust, clientAddress } from '../client-address.ts'
import { countAttempt } from '../../accounts/people/attempts.ts'
import { confirmEmailLink } from '../../accounts/people/confirm-link.ts'
import { sendLink } from '../../accounts/people/send-link.ts'
import { siteBase } from '../../accounts/people/site-url.ts'
import { normalizeEmail } from '../../accounts/people/users.ts'
import { confirmPage } from '../email-confirm-page.ts'
import type { AdminDeps } from './admin-deps.ts'
import { startSession } from './sign-in-session.ts'

export const SIGN_IN_MAIL_ANSWER =
  'If this address can receive mail, a sign-in link is on its way. It works once and expires soon.'

export function emailRoutes(deps: AdminDeps) {
  const trust = addressTrust(deps.config)
  return new Elysia()
    .post(
      '/auth/email',
      async ({ request, server, body, set }) => {
        await countAttempt(
          deps.limiter,
          'sign-in-mail',
          clientAddress(server, request, trust),
          deps.config.SIGN_IN_ATTEMPTS_PER_MINUTE,
          'sign-in mails requested from this address',
        )
        await sendLink(
          deps,
          { email: normalizeEmail(body.email), purpose: 'sign_in' },
          siteBase(deps.config.PUBLIC_SITE_URL, request),
          { next: dashboardPath(body.next) },
        )
        set.status = 202
        return { ok: true as const, message: SIGN_IN_MAIL_ANSWER }
      },
      {
        body: EmailSignIn,
        response: { 202: MailSent },
        detail: {
          summary:
            'Send a sign-in link to an e-mail address (same answer whether or not it has an account)',
        },
      },
    )
    .post(
      '/auth/email/confirm',
      ({ request, body, set }) =>
        (request.headers.get('content-type') ?? '').startsWith('application/x-www-form-urlencoded')
          ? confirmFromForm(deps, request, body.token, body.next)
          : confirm(deps, set, body.token),
      {
        body: EmailConfirm,
        response: SignedIn,
        detail: {
          summary:
            'Consume an e-mailed link (sign-in, claim or invite) and open a session; the confirm page’s form posts here',
        },
      },
    )
}

async function confirm(
  deps: AdminDeps,
  set: { headers: Record<string, string | number> },
  token: string,
): Promise<SignedIn> {
  const confirmed = await confirmEmailLink(deps, token, deps.clock.now())
  return startSession(
    deps,
    set,
    { accountId: confirmed.accountId, userId: confirmed.userId },
    confirmed.purpose,
  )
}

/**
 * The confirm page's button: a redirect to the dashboard page the sign-in was asked from (only a path of
 * this site's dashboard, never another site) with the session cookie, or a page naming the refusal.
 */
async function confirmFromForm(
  deps: AdminDeps,
  request: Request,
  token: string,
  next: string | undefined,
): Promise<Response> {
  const set = { headers: {} as Record<string, string | number> }
  try {
    await confirm(deps, set, token)
  } catch (error) {
    if (error instanceof ServiceError) return confirmPage.refused(error)
    throw error
  }
  const headers = new Headers(
    Object.entries(set.headers).map(([name, value]) => [name, String(value)]),
  )
  const page = dashboardPath(next) ?? '/dashboard'
  headers.set('location', `${siteBase(deps.config.PUBLIC_SITE_URL, request)}${page}`)
  headers.set('referrer-policy', 'no-referrer')
  return new Response(null, { status: 303, headers })
}
