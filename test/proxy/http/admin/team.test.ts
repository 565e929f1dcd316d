// Teams: the owner invites by e-mail (a real SMTP server carries the link), the invitee accepts by
// confirming it and then acts for the account; members read but cannot manage the team; removing a
// member, or the member leaving, ends their access at once; the owner can neither be removed nor leave;
// accountless accounts have no team until claimed.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { addPushSubscription } from '../../../../proxy/accounts/alerts/alert-settings.ts'
import { suspendAccount } from '../../../../proxy/accounts/suspension.ts'
import { admin, sessionFor } from '../../../helpers/admin.ts'
import { startTestGateway, type TestGateway } from '../../../helpers/gateway.ts'
import { describeWith } from '../../../helpers/services.ts'
import { linkIn, startSmtpServer, type TestSmtp } from '../../../helpers/smtp.ts'

type ErrorBody = { error: { code: string; message: string; param: string | null } }
type Me = {
  account: { id: string }
  role: string
  memberships: { accountId: string; role: string }[]
}
type Team = {
  members: { userId: string; role: string; email: string | null }[]
  invites: { email: string; role: string }[]
}

let counter = 0
const newEmail = () => `member${++counter}.${Date.now()}@people.test`

describeWith('postgres', 'teams', () => {
  let gw: TestGateway
  let smtp: TestSmtp
  beforeAll(async () => {
    smtp = await startSmtpServer()
    gw = await startTestGateway({
      store: 'memory',
      database: 'postgres',
      env: { SMTP_URL: smtp.url, SIGN_IN_ATTEMPTS_PER_MINUTE: '1000' },
    })
  })
  afterAll(async () => {
    await gw.close()
    await smtp.close()
  })

  /** An account with an identity and its owner's session. */
  async function team() {
    const accountId = await gw.account('1')
    await gw.app.operator.sql`UPDATE accounts SET kind = 'identity' WHERE id = ${accountId}`
    const ownerEmail = newEmail()
    const owner = await sessionFor(gw, accountId, 'owner', ownerEmail)
    return { accountId, owner, ownerEmail }
  }
  /** Invites `email` and accepts by confirming the mailed link; the invitee's session cookie. */
  async function inviteAndAccept(
    ownerCookie: string,
    email: string,
    role: 'admin' | 'member',
  ): Promise<{ cookie: string; userId: string }> {
    const invited = await admin(gw, 'POST', '/admin/v1/team/invites', {
      cookie: ownerCookie,
      body: { email, role },
    })
    expect(invited.status).toBe(202)
    const link = linkIn(await smtp.next(email))
    expect(await (await gw.app.site.handle(new Request(link))).text()).toContain(
      `as ${role} with ${email}`,
    )
    const accepted = await admin(gw, 'POST', '/admin/v1/auth/email/confirm', {
      body: { token: link.searchParams.get('token') },
    })
    expect(accepted.status).toBe(200)
    const body = (await accepted.json()) as { user: { id: string }; role: string; purpose: string }
    expect(body).toMatchObject({ role, purpose: 'invite' })
    return { cookie: accepted.headers.get('set-cookie')!.split(';')[0]!, userId: body.user.id }
  }

  /** A push subscription of the user's browser to the account's credit alerts; its endpoint. */
  async function subscribe(accountId: string, userId: string): Promise<string> {
    const endpoint = `https://93.184.215.14/${userId}-${accountId}`
    const keys = {
      p256dh: Buffer.alloc(65, 4).toString('base64url'),
      auth: Buffer.alloc(16, 7).toString('base64url'),
    }
    await addPushSubscription(gw.app.operator.sql, { accountId, userId }, { endpoint, keys }, false)
    return endpoint
  }

  test('an invite, accepted, makes the invitee a member who sees the account', async () => {
    const { accountId, owner, ownerEmail } = await team()
    const email = newEmail()
    const invited = await admin(gw, 'POST', '/admin/v1/team/invites', {
      cookie: owner.cookie,
      body: { email, role: 'member' },
    })
    expect(invited.status).toBe(202)
    const pending = (await (
      await admin(gw, 'GET', '/admin/v1/team', { cookie: owner.cookie })
    ).json()) as Team
    expect(pending.invites).toEqual([expect.objectContaining({ email, role: 'member' })])
    const mail = await smtp.next(email)
    // The mail says who invited the reader and to which account's team.
    expect(mail.text).toContain(
      `${ownerEmail} invited you to join the team of Model Gateway account ${accountId} as member.`,
    )
    // Headers are folded at 78 characters: unfolded, the subject reads in one piece.
    expect(mail.raw.replace(/\r\n(?=[ \t])/g, '')).toContain(
      `Subject: ${ownerEmail} invited you to their Model Gateway team`,
    )
    const link = linkIn(mail)
    const accepted = await admin(gw, 'POST', '/admin/v1/auth/email/confirm', {
      body: { token: link.searchParams.get('token') },
    })
    const cookie = accepted.headers.get('set-cookie')!.split(';')[0]!
    const me = await (await admin(gw, 'GET', '/admin/v1/me', { cookie })).json()
    expect(me).toMatchObject({
      account: { id: accountId },
      role: 'member',
      via: 'user',
      user: { email },
    })
    const seen = (await (await admin(gw, 'GET', '/admin/v1/team', { cookie })).json()) as Team
    expect(seen.members.map((member) => [member.role, member.email])).toEqual([
      ['owner', expect.any(String)],
      ['member', email],
    ])
    expect(seen.invites).toEqual([])
  })

  test('the owner withdraws a pending invitation: it leaves the list and its link opens nothing', async () => {
    const { owner } = await team()
    const email = newEmail()
    await admin(gw, 'POST', '/admin/v1/team/invites', {
      cookie: owner.cookie,
      body: { email, role: 'admin' },
    })
    const link = linkIn(await smtp.next(email))
    const withdrawn = await admin(
      gw,
      'DELETE',
      `/admin/v1/team/invites/${encodeURIComponent(email.toUpperCase())}`,
      { cookie: owner.cookie },
    )
    expect(withdrawn.status).toBe(200)
    const list = (await (
      await admin(gw, 'GET', '/admin/v1/team', { cookie: owner.cookie })
    ).json()) as Team
    expect(list.invites).toEqual([])
    const accepted = await admin(gw, 'POST', '/admin/v1/auth/email/confirm', {
      body: { token: link.searchParams.get('token') },
    })
    expect(accepted.status).toBe(401)
    const again = await admin(gw, 'DELETE', `/admin/v1/team/invites/${encodeURIComponent(email)}`, {
      cookie: owner.cookie,
    })
    expect(again.status).toBe(404)
  })

  test('a member (or an admin) cannot invite: 403 naming the rule', async () => {
    const { owner } = await team()
    for (const role of ['member', 'admin'] as const) {
      const { cookie } = await inviteAndAccept(owner.cookie, newEmail(), role)
      const refused = await admin(gw, 'POST', '/admin/v1/team/invites', {
        cookie,
        body: { email: newEmail(), role: 'member' },
      })
      expect(refused.status).toBe(403)
      const body = (await refused.json()) as ErrorBody
      expect(body.error.code).toBe('forbidden')
      expect(body.error.message).toContain(
        "only the account owner can manage the account's members",
      )
    }
  })

  test('removing a member ends their access and their credit alerts at once', async () => {
    const { accountId, owner } = await team()
    const member = await inviteAndAccept(owner.cookie, newEmail(), 'member')
    expect((await admin(gw, 'GET', '/admin/v1/me', { cookie: member.cookie })).status).toBe(200)
    const endpoint = await subscribe(accountId, member.userId)
    const removed = await admin(gw, 'DELETE', `/admin/v1/team/${member.userId}`, {
      cookie: owner.cookie,
    })
    expect(removed.status).toBe(200)
    expect((await admin(gw, 'GET', '/admin/v1/me', { cookie: member.cookie })).status).toBe(401)
    const left = (await (
      await admin(gw, 'GET', '/admin/v1/team', { cookie: owner.cookie })
    ).json()) as Team
    expect(left.members.map((entry) => entry.role)).toEqual(['owner'])
    expect(
      await gw.app.operator.sql`SELECT 1 FROM push_subscriptions WHERE endpoint = ${endpoint}`,
    ).toHaveLength(0)
  })

  test('a member leaves: the session moves to their other account and the one left is refused', async () => {
    const first = await team()
    const second = await team()
    const email = newEmail()
    // Joined first (as admin), then second: the session of the second invitation acts for the second account.
    const inFirst = await inviteAndAccept(first.owner.cookie, email, 'admin')
    const { cookie, userId } = await inviteAndAccept(second.owner.cookie, email, 'member')
    const switched = await admin(gw, 'PUT', '/admin/v1/session/account', {
      cookie,
      body: { accountId: first.accountId },
    })
    expect(switched.status).toBe(200)
    // As admin they made a key, and their browser asked for the account's credit alerts.
    const key = (await (
      await admin(gw, 'POST', '/admin/v1/keys', { cookie, body: { name: 'made by the leaver' } })
    ).json()) as { id: string }
    const endpoint = await subscribe(first.accountId, userId)

    const left = await admin(gw, 'POST', '/admin/v1/team/leave', { cookie })
    expect(left.status).toBe(200)
    expect(await left.json()).toEqual({ ok: true, accountId: second.accountId })
    expect(left.headers.get('set-cookie')).toBeNull()

    // This session now acts for what they still have; the account they left is not among it.
    const me = (await (await admin(gw, 'GET', '/admin/v1/me', { cookie })).json()) as Me
    expect(me.account.id).toBe(second.accountId)
    expect(me.role).toBe('member')
    expect(me.memberships).toEqual([{ accountId: second.accountId, role: 'member' }])
    const back = await admin(gw, 'PUT', '/admin/v1/session/account', {
      cookie,
      body: { accountId: first.accountId },
    })
    expect(back.status).toBe(404)
    // Their other session for the account they left ended with it.
    expect((await admin(gw, 'GET', '/admin/v1/me', { cookie: inFirst.cookie })).status).toBe(401)

    // The owner sees them gone; the key they made stays with the account, active; their alerts stop.
    const members = (await (
      await admin(gw, 'GET', '/admin/v1/team', { cookie: first.owner.cookie })
    ).json()) as Team
    expect(members.members.map((member) => member.role)).toEqual(['owner'])
    const keys = (await (
      await admin(gw, 'GET', '/admin/v1/keys', { cookie: first.owner.cookie })
    ).json()) as { keys: { id: string; status: string }[] }
    expect(keys.keys.find((entry) => entry.id === key.id)?.status).toBe('active')
    expect(
      await gw.app.operator.sql`SELECT 1 FROM push_subscriptions WHERE endpoint = ${endpoint}`,
    ).toHaveLength(0)
    // The other team keeps them.
    const stays = (await (
      await admin(gw, 'GET', '/admin/v1/team', { cookie: second.owner.cookie })
    ).json()) as Team
    expect(stays.members.map((member) => member.userId)).toContain(userId)
  })

  test('a member with no other account leaves: the session ends and its cookie is cleared', async () => {
    const { accountId, owner } = await team()
    const member = await inviteAndAccept(owner.cookie, newEmail(), 'member')
    // Suspension does not keep anyone in.
    await suspendAccount(gw.app.operator, accountId, 'abuse')
    const left = await admin(gw, 'POST', '/admin/v1/team/leave', { cookie: member.cookie })
    expect(left.status).toBe(200)
    expect(await left.json()).toEqual({ ok: true, accountId: null })
    expect(left.headers.get('set-cookie')).toContain('Max-Age=0')
    expect((await admin(gw, 'GET', '/admin/v1/me', { cookie: member.cookie })).status).toBe(401)
    expect((await admin(gw, 'GET', '/admin/v1/team', { cookie: member.cookie })).status).toBe(401)
    const again = await admin(gw, 'POST', '/admin/v1/team/leave', { cookie: member.cookie })
    expect(again.status).toBe(401)
  })

  test('the owner cannot leave: 409 naming what to do instead, and stays the owner', async () => {
    const { accountId, owner } = await team()
    await inviteAndAccept(owner.cookie, newEmail(), 'member')
    const refused = await admin(gw, 'POST', '/admin/v1/team/leave', { cookie: owner.cookie })
    expect(refused.status).toBe(409)
    const body = (await refused.json()) as ErrorBody
    expect(body.error.code).toBe('conflict')
    expect(body.error.message).toContain('The owner cannot leave the account')
    expect(body.error.message).toContain('ownership is not transferable here')
    expect(body.error.message).toContain('write to support')
    const me = (await (
      await admin(gw, 'GET', '/admin/v1/me', { cookie: owner.cookie })
    ).json()) as Me
    expect(me).toMatchObject({ account: { id: accountId }, role: 'owner' })
    // A dashboard link acts as the owner of its account: it cannot leave either.
    const link = await sessionFor(gw, await gw.account('1'))
    const linkRefused = await admin(gw, 'POST', '/admin/v1/team/leave', { cookie: link.cookie })
    expect(linkRefused.status).toBe(409)
  })

  test('the owner changes roles; the owner itself can be neither demoted nor removed', async () => {
    const { owner } = await team()
    const member = await inviteAndAccept(owner.cookie, newEmail(), 'member')
    expect(
      (
        await admin(gw, 'PATCH', `/admin/v1/team/${member.userId}`, {
          cookie: owner.cookie,
          body: { role: 'admin' },
        })
      ).status,
    ).toBe(200)
    expect(
      (
        (await (await admin(gw, 'GET', '/admin/v1/me', { cookie: member.cookie })).json()) as {
          role: string
        }
      ).role,
    ).toBe('admin')
    const demote = await admin(gw, 'PATCH', `/admin/v1/team/${owner.userId}`, {
      cookie: owner.cookie,
      body: { role: 'member' },
    })
    expect(demote.status).toBe(409)
    expect(((await demote.json()) as ErrorBody).error.message).toContain(
      'ownership is not transferable',
    )
    const leave = await admin(gw, 'DELETE', `/admin/v1/team/${owner.userId}`, {
      cookie: owner.cookie,
    })
    expect(leave.status).toBe(409)
    const asOwner = await admin(gw, 'PATCH', `/admin/v1/team/${member.userId}`, {
      cookie: owner.cookie,
      body: { role: 'owner' },
    })
    expect(asOwner.status).toBe(400)
  })

  test("another account's member is not found", async () => {
    const first = await team()
    const second = await team()
    const member = await inviteAndAccept(second.owner.cookie, newEmail(), 'member')
    expect(
      (await admin(gw, 'DELETE', `/admin/v1/team/${member.userId}`, { cookie: first.owner.cookie }))
        .status,
    ).toBe(404)
    expect(
      (
        await admin(gw, 'PATCH', `/admin/v1/team/${member.userId}`, {
          cookie: first.owner.cookie,
          body: { role: 'admin' },
        })
      ).status,
    ).toBe(404)
    expect((await admin(gw, 'GET', '/admin/v1/me', { cookie: member.cookie })).status).toBe(200)
  })

  test('inviting a current member is a conflict', async () => {
    const { owner } = await team()
    const email = newEmail()
    await inviteAndAccept(owner.cookie, email, 'member')
    const again = await admin(gw, 'POST', '/admin/v1/team/invites', {
      cookie: owner.cookie,
      body: { email, role: 'admin' },
    })
    expect(again.status).toBe(409)
    expect(((await again.json()) as ErrorBody).error.param).toBe('email')
  })

  test('an accountless account cannot have team members until it is claimed', async () => {
    const accountId = await gw.account('1')
    const { cookie } = await sessionFor(gw, accountId)
    const refused = await admin(gw, 'POST', '/admin/v1/team/invites', {
      cookie,
      body: { email: newEmail(), role: 'member' },
    })
    expect(refused.status).toBe(403)
    expect(((await refused.json()) as ErrorBody).error.message).toContain(
      'accountless account cannot have team members: claim it first',
    )
    expect(await (await admin(gw, 'GET', '/admin/v1/team', { cookie })).json()).toEqual({
      members: [],
      invites: [],
    })
  })

  test('without a session the team is 401', async () => {
    expect((await admin(gw, 'GET', '/admin/v1/team')).status).toBe(401)
  })
})
