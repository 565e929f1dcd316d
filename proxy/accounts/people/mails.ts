/**
 * The mails of the sign-in surface: a sign-in link, a claim confirmation and a team invite. Each carries
 * one single-use link to the confirm page; none says whether the address already has an account.
 */
import type { Mail } from './mailer.ts'
import type { TokenPurpose } from './email-tokens.ts'

export type LinkMail = {
  to: string
  purpose: TokenPurpose
  link: string
  ttlMs: number
  accountId?: string
  role?: string
  /** Who sent an invitation: their e-mail address, or their wallet when they have none. */
  invitedBy?: string
}

export function linkMail(mail: LinkMail): Mail {
  const minutes = Math.max(1, Math.round(mail.ttlMs / 60_000))
  const { subject, action, ignore } = wording(mail)
  const text = [
    action,
    '',
    mail.link,
    '',
    `The link works once, within ${minutes} minutes. Opening it shows a page with a button; nothing happens until you press it.`,
    ignore,
  ].join('\n')
  const html =
    `<p>${escapeHtml(action)}</p><p><a href="${escapeHtml(mail.link)}">${escapeHtml(subject)}</a></p>` +
    `<p>The link works once, within ${minutes} minutes. ${escapeHtml(ignore)}</p>`
  return { to: mail.to, subject, text, html }
}

// Sign-in and claim links are asked for by their reader; an invitation is not, so it says how to decline.
const IGNORE = 'If you did not ask for this, ignore this message.'

function wording(mail: LinkMail): { subject: string; action: string; ignore: string } {
  switch (mail.purpose) {
    case 'sign_in':
      return {
        subject: 'Sign in to Model Gateway',
        action:
          'Use this link to sign in to Model Gateway (an account is created for this address if it has none):',
        ignore: IGNORE,
      }
    case 'claim':
      return {
        subject: 'Confirm your e-mail address for your Model Gateway account',
        action: `Use this link to attach this e-mail address to account ${mail.accountId}. Its keys and balance keep working; its dashboard link ends, as you sign in with this address from then on:`,
        ignore: IGNORE,
      }
    case 'invite':
      // The reader did not ask for this mail: it says who sent it and to which team, so they can judge it.
      return {
        subject: mail.invitedBy
          ? `${mail.invitedBy} invited you to their Model Gateway team`
          : 'You are invited to a Model Gateway team',
        action: `${mail.invitedBy ?? 'The owner of a Model Gateway account'} invited you to join the team of Model Gateway account ${mail.accountId} as ${mail.role}. Use this link to accept:`,
        ignore:
          'If you do not want to join, ignore this message: you are added only when you press the button.',
      }
  }
}

export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!,
  )
}
