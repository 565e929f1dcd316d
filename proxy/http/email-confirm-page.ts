/**
 * `GET /auth/email?token=…`: the page an e-mailed link opens (sign-in, claim or invite). It only shows
 * what the link is for and a button: mail scanners and link previews fetch links, so a GET never consumes
 * one. The button POSTs the token to `/admin/v1/auth/email/confirm`, which does. Plain HTML with no script,
 * not cacheable, not frameable, no Referer.
 */
import { Elysia } from 'elysia'
import { dashboardPath } from '../../shared/dashboard-path.ts'
import { errorTable, ServiceError } from '../../shared/errors.ts'
import { peekEmailToken, type EmailToken } from '../accounts/people/email-tokens.ts'
import { escapeHtml } from '../accounts/people/mails.ts'
import { siteBase } from '../accounts/people/site-url.ts'
import { requireAccountless } from '../accounts/people/users.ts'
import type { AdminDeps } from './admin/admin-deps.ts'

/** The way on from a link that cannot be used: the dashboard's sign-in, which goes on to it when signed in. */
const BACK = '<p><a href="/sign-in">Go to the dashboard</a></p>'

const HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
}

export function emailConfirmPage(deps: AdminDeps) {
  return new Elysia().get('/auth/email', async ({ request }) => {
    const query = new URL(request.url).searchParams
    const token = query.get('token') ?? ''
    // The dashboard page the sign-in was asked from goes on to the POST; anything else is dropped.
    const next = dashboardPath(query.get('next'))
    const link = token ? await peekEmailToken(deps.sql, token, deps.clock.now()) : undefined
    if (!link)
      return page(
        410,
        'This link cannot be used',
        `<p>It expired or was already used. Ask for a new one from the dashboard.</p>\n${BACK}`,
      )
    // A claim of an account claimed another way since would be refused on confirming: say so now.
    if (link.purpose === 'claim' && link.accountId) {
      const refused = await requireAccountless(deps.sql, link.accountId).then(
        () => undefined,
        (error: unknown) => error,
      )
      if (refused instanceof ServiceError) return confirmPage.refused(refused)
      if (refused) throw refused
    }
    const action = `${siteBase(deps.config.PUBLIC_SITE_URL, request)}/admin/v1/auth/email/confirm`
    const { title, text, button } = wording(link)
    return page(
      200,
      title,
      `<p>${escapeHtml(text)}</p>
<form method="post" action="${escapeHtml(action)}">
<input type="hidden" name="token" value="${escapeHtml(token)}">
${next ? `<input type="hidden" name="next" value="${escapeHtml(next)}">\n` : ''}<button type="submit">${escapeHtml(button)}</button>
</form>`,
    )
  })
}

/** The page a refused confirmation (form POST) shows instead of the JSON error. */
export const confirmPage = {
  refused: (error: ServiceError) =>
    page(
      errorTable[error.code].status,
      'This link did not work',
      `<p>${escapeHtml(error.message)}</p>\n${BACK}`,
    ),
}

function wording(link: EmailToken): { title: string; text: string; button: string } {
  switch (link.purpose) {
    case 'sign_in':
      return { title: 'Sign in', text: `Sign in as ${link.email}.`, button: 'Sign in' }
    case 'claim':
      return {
        title: 'Attach your e-mail address',
        text: `Attach ${link.email} to account ${link.accountId}; you become its owner. Its keys and balance keep working; its dashboard link ends, as you sign in with this address from then on.`,
        button: 'Attach and sign in',
      }
    case 'invite':
      return {
        title: 'Join the team',
        text: `Join account ${link.accountId} as ${link.role} with ${link.email}.`,
        button: 'Join and sign in',
      }
  }
}

function page(status: number, title: string, body: string): Response {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Model Gateway</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem}button{font:inherit;padding:.5rem 1.25rem}</style>
</head><body><h1>${escapeHtml(title)}</h1>
${body}
</body></html>
`
  return new Response(html, { status, headers: HEADERS })
}
