import { describe, expect, test } from 'bun:test'
import { linkMail } from '../../../../proxy/accounts/people/mails.ts'

const base = {
  to: 'someone@people.test',
  link: 'https://site.test/auth/email?token=t',
  ttlMs: 900_000,
}

describe('link mails', () => {
  test('an invitation tells its reader how to decline, not that they asked for it', () => {
    const mail = linkMail({ ...base, purpose: 'invite', accountId: 'acct_x', role: 'member' })
    for (const body of [mail.text, mail.html]) {
      expect(body).not.toContain('did not ask')
      expect(body).toContain('If you do not want to join, ignore this message')
    }
  })

  test('an invitation names the member who sent it and the account whose team it is', () => {
    const mail = linkMail({
      ...base,
      purpose: 'invite',
      accountId: 'acct_x',
      role: 'admin',
      invitedBy: 'owner@people.test',
    })
    expect(mail.subject).toBe('owner@people.test invited you to their Model Gateway team')
    for (const body of [mail.text, mail.html]) {
      expect(body).toContain(
        'owner@people.test invited you to join the team of Model Gateway account acct_x as admin.',
      )
    }
  })

  test('a sign-in link the reader did not ask for is to be ignored', () => {
    const mail = linkMail({ ...base, purpose: 'sign_in' })
    expect(mail.text).toContain('If you did not ask for this, ignore this message.')
    expect(mail.html).toContain('If you did not ask for this, ignore this message.')
  })
})
