// The admin API's authorization matrix: every route of its OpenAPI document × {owner, team member, another
// account, no session, dashboard-link session, suspended account}, each cell on fresh objects and a fresh
// session, with the status the permission rules give. Another account's session reaches none of this
// account's objects (404) and its lists show none of them; a route added without a row here fails the test.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { newUserId } from '../../../../proxy/accounts/ids.ts'
import { suspendAccount } from '../../../../proxy/accounts/suspension.ts'
import { addPushSubscription } from '../../../../proxy/accounts/alerts/alert-settings.ts'
import { confirmSecrets } from '../../../../proxy/accounts/people/accountless.ts'
import { openSession, SESSION_COOKIE } from '../../../../proxy/accounts/people/sessions.ts'
import { createGuardrail } from '../../../../proxy/accounts/settings/guardrails.ts'
import { savePreset } from '../../../../proxy/accounts/settings/presets.ts'
import { openTicket } from '../../../../proxy/accounts/support/tickets.ts'
import { admin, sessionFor } from '../../../helpers/admin.ts'
import { startTestGateway, type TestGateway } from '../../../helpers/gateway.ts'
import { describeWith } from '../../../helpers/services.ts'

const ACTORS = ['owner', 'member', 'other', 'none', 'link', 'suspended'] as const
type Actor = (typeof ACTORS)[number]
type Action = 'read' | 'manage' | 'revoke' | 'billing' | 'link' | 'team' | 'support' | 'chat'

/** What a cell needs: the account its objects live in (the actor's own, or for `other` this account's). */
type Cell = { accountId: string; identity: boolean; unique: string }
type Call = { path: string; body?: unknown }

type Row = {
  /** METHOD and path as in the OpenAPI document. */
  route: string
  /** The permission the route asks of a session; `public` routes ask none and answer every actor alike. */
  action: Action | 'public'
  /** Builds the call on fresh objects of the cell's account. */
  call: (cell: Cell) => Promise<Call> | Call
  /** The status of a permitted call. */
  ok: number
  /** The path names one of the account's objects: another account gets 404. */
  object?: boolean
  /** A dashboard-link session's status when it differs from `ok` (accountless accounts have no team or alerts). */
  link?: number
  /** No session's status when it is not 401 (signing out is idempotent). */
  none?: number
  /** A team member's status when it differs from `ok` (leaving is refused to owners only). */
  member?: number
}

const hello = [{ role: 'user', content: 'hello' }]
const pushKeys = {
  p256dh: Buffer.alloc(65, 4).toString('base64url'),
  auth: Buffer.alloc(16, 7).toString('base64url'),
}

// On PostgreSQL and on the embedded database (PGlite), the default of a fresh install.
const onDatabase = (database: 'postgres' | 'embedded', name: string, body: () => void) =>
  database === 'postgres' ? describeWith('postgres', name, body) : describe(name, body)

for (const database of ['postgres', 'embedded'] as const)
  onDatabase(database, `admin API authorization matrix (${database})`, () => {
    let gw: TestGateway
    /** The account under test, another one, an accountless one (link sessions) and a suspended one. */
    let home: string
    let other: string
    let accountless: string
    let suspended: string
    /** Objects of the home account that another account's lists must never show. */
    const homeObjects: string[] = []
    /** Each account has one owner: every owner cell opens a new session of the same user. */
    const owners = new Map<string, string>()
    let counter = 0

    beforeAll(async () => {
      gw = await startTestGateway({ store: 'memory', database })
      const { sql } = gw.app.operator
      home = await gw.account('50')
      other = await gw.account('50')
      accountless = await gw.account('50')
      suspended = await gw.account('50')
      await sql`UPDATE accounts SET kind = 'identity' WHERE id IN (${home}, ${other}, ${suspended})`
      await confirmSecrets(sql, accountless, gw.app.operator.clock.now())
      const cell = { accountId: home, identity: true, unique: 'home' }
      homeObjects.push(
        await fixtures.key(cell),
        await fixtures.guardrail(cell),
        await fixtures.ticket(cell),
        `@preset/${await fixtures.preset(cell)}`,
      )
      for (const accountId of [home, other, suspended])
        owners.set(accountId, (await sessionFor(gw, accountId, 'owner')).userId!)
      await suspendAccount(gw.app.operator, suspended, 'abuse')
    })
    afterAll(() => gw?.close())

    const fixtures = {
      key: async (cell: Cell) => (await gw.key(cell.accountId, { name: `key ${cell.unique}` })).id,
      guardrail: async (cell: Cell) =>
        (await createGuardrail(gw.app.operator, cell.accountId, { name: `guard ${cell.unique}` }))
          .id,
      preset: async (cell: Cell) => {
        await savePreset(gw.app.operator, cell.accountId, `p-${cell.unique}`, {
          model: 'test/cheap',
        })
        return `p-${cell.unique}`
      },
      ticket: async (cell: Cell) =>
        (
          await openTicket(
            gw.app.operator.sql,
            { accountId: cell.accountId, userId: null },
            { subject: 'Hello', body: 'A question.' },
          )
        ).id,
      /** A team member of the account (an accountless account has none: the user exists, the membership does not). */
      member: async (cell: Cell) => {
        const { sql } = gw.app.operator
        const userId = newUserId()
        await sql`INSERT INTO users (id, email) VALUES (${userId}, ${`${userId}@people.test`})`
        if (cell.identity)
          await sql`INSERT INTO memberships (account_id, user_id, role) VALUES (${cell.accountId}, ${userId}, 'member')`
        return userId
      },
      /** A pending invitation of the account (an accountless account has none); its address. */
      invite: async (cell: Cell) => {
        const email = `invited-${cell.unique}@people.test`
        if (cell.identity)
          await gw.app.operator.sql`
            INSERT INTO email_tokens (token_hash, email, purpose, account_id, role, expires_at)
            VALUES (${randomBytes(32)}, ${email}, 'invite', ${cell.accountId}, 'member', now() + interval '1 hour')`
        return email
      },
      push: async (cell: Cell) => {
        const endpoint = `https://93.184.215.14/${cell.unique}`
        if (cell.identity)
          await addPushSubscription(
            gw.app.operator.sql,
            { accountId: cell.accountId, userId: null },
            { endpoint, keys: pushKeys },
            false,
          )
        return encodeURIComponent(endpoint)
      },
    }

    const ROWS: Row[] = [
      // The session itself.
      { route: 'GET /admin/v1/me', action: 'read', ok: 200, call: () => ({ path: '/me' }) },
      {
        route: 'PUT /admin/v1/session/account',
        action: 'read',
        ok: 200,
        object: true,
        link: 404,
        call: (cell) => ({ path: '/session/account', body: { accountId: cell.accountId } }),
      },
      {
        route: 'DELETE /admin/v1/session',
        action: 'public',
        ok: 200,
        none: 200,
        call: () => ({ path: '/session' }),
      },
      // Entry paths: no session needed, the same answer for everyone (bad proofs here).
      {
        route: 'GET /admin/v1/setup/challenge',
        action: 'public',
        ok: 200,
        call: () => ({ path: '/setup/challenge' }),
      },
      {
        route: 'POST /admin/v1/setup',
        action: 'public',
        ok: 400,
        call: () => ({ path: '/setup', body: { altcha: 'not-a-solution' } }),
      },
      {
        route: 'POST /admin/v1/session/link',
        action: 'public',
        ok: 401,
        call: () => ({ path: '/session/link', body: { secret: 'svc-link-unknown' } }),
      },
      {
        route: 'POST /admin/v1/auth/email',
        action: 'public',
        ok: 202,
        call: (cell) => ({
          path: '/auth/email',
          body: { email: `sign-in-${cell.unique}@people.test` },
        }),
      },
      {
        route: 'POST /admin/v1/auth/email/confirm',
        action: 'public',
        ok: 401,
        call: () => ({ path: '/auth/email/confirm', body: { token: 'not-a-token' } }),
      },
      {
        route: 'GET /admin/v1/auth/wallet/nonce',
        action: 'public',
        ok: 200,
        call: () => ({ path: '/auth/wallet/nonce' }),
      },
      {
        route: 'POST /admin/v1/auth/wallet',
        action: 'public',
        ok: 400,
        call: () => ({
          path: '/auth/wallet',
          body: { message: 'not a SIWE message', signature: '0x00' },
        }),
      },
      // Confirming the saved secrets unlocks the top-up: the owner's step.
      {
        route: 'POST /admin/v1/setup/confirm',
        action: 'billing',
        ok: 200,
        call: () => ({ path: '/setup/confirm', body: { keySaved: true, linkSaved: true } }),
      },
      // Team.
      { route: 'GET /admin/v1/team', action: 'read', ok: 200, call: () => ({ path: '/team' }) },
      // Every other actor acts as an owner (a dashboard link as its account's): only a member may leave.
      {
        route: 'POST /admin/v1/team/leave',
        action: 'read',
        ok: 409,
        member: 200,
        call: () => ({ path: '/team/leave' }),
      },
      {
        route: 'POST /admin/v1/team/invites',
        action: 'team',
        ok: 202,
        link: 403,
        call: (cell) => ({
          path: '/team/invites',
          body: { email: `invite-${cell.unique}@people.test`, role: 'member' },
        }),
      },
      {
        route: 'DELETE /admin/v1/team/invites/{email}',
        action: 'team',
        ok: 200,
        object: true,
        link: 404,
        call: async (cell) => ({
          path: `/team/invites/${encodeURIComponent(await fixtures.invite(cell))}`,
        }),
      },
      {
        route: 'PATCH /admin/v1/team/{userId}',
        action: 'team',
        ok: 200,
        object: true,
        link: 404,
        call: async (cell) => ({
          path: `/team/${await fixtures.member(cell)}`,
          body: { role: 'admin' },
        }),
      },
      {
        route: 'DELETE /admin/v1/team/{userId}',
        action: 'team',
        ok: 200,
        object: true,
        link: 404,
        call: async (cell) => ({ path: `/team/${await fixtures.member(cell)}` }),
      },
      // Keys.
      { route: 'GET /admin/v1/keys', action: 'read', ok: 200, call: () => ({ path: '/keys' }) },
      {
        route: 'GET /admin/v1/keys/defaults',
        action: 'read',
        ok: 200,
        call: () => ({ path: '/keys/defaults' }),
      },
      {
        route: 'POST /admin/v1/keys',
        action: 'manage',
        ok: 201,
        call: () => ({ path: '/keys', body: { name: 'new' } }),
      },
      {
        route: 'PATCH /admin/v1/keys/{id}',
        action: 'manage',
        ok: 200,
        object: true,
        call: async (cell) => ({
          path: `/keys/${await fixtures.key(cell)}`,
          body: { rpmLimit: 10 },
        }),
      },
      {
        route: 'POST /admin/v1/keys/{id}/revoke',
        action: 'revoke',
        ok: 200,
        object: true,
        call: async (cell) => ({ path: `/keys/${await fixtures.key(cell)}/revoke` }),
      },
      {
        route: 'POST /admin/v1/keys/{id}/rotate',
        action: 'manage',
        ok: 201,
        object: true,
        call: async (cell) => ({ path: `/keys/${await fixtures.key(cell)}/rotate` }),
      },
      // Presets, guardrails, routing.
      {
        route: 'GET /admin/v1/presets',
        action: 'read',
        ok: 200,
        call: () => ({ path: '/presets' }),
      },
      // A slug names a preset within the session's account: another account's PUT makes its own.
      {
        route: 'PUT /admin/v1/presets/{slug}',
        action: 'manage',
        ok: 201,
        call: async (cell) => ({
          path: `/presets/${await fixtures.preset(cell)}-new`,
          body: { model: 'test/other' },
        }),
      },
      {
        route: 'DELETE /admin/v1/presets/{slug}',
        action: 'manage',
        ok: 200,
        object: true,
        call: async (cell) => ({ path: `/presets/${await fixtures.preset(cell)}` }),
      },
      {
        route: 'GET /admin/v1/guardrails',
        action: 'read',
        ok: 200,
        call: () => ({ path: '/guardrails' }),
      },
      {
        route: 'POST /admin/v1/guardrails',
        action: 'manage',
        ok: 201,
        call: (cell) => ({ path: '/guardrails', body: { name: `new ${cell.unique}` } }),
      },
      {
        route: 'PATCH /admin/v1/guardrails/{id}',
        action: 'manage',
        ok: 200,
        object: true,
        call: async (cell) => ({
          path: `/guardrails/${await fixtures.guardrail(cell)}`,
          body: { budgetNano: 1_000_000_000 },
        }),
      },
      {
        route: 'DELETE /admin/v1/guardrails/{id}',
        action: 'manage',
        ok: 200,
        object: true,
        call: async (cell) => ({ path: `/guardrails/${await fixtures.guardrail(cell)}` }),
      },
      {
        route: 'GET /admin/v1/routing',
        action: 'read',
        ok: 200,
        call: () => ({ path: '/routing' }),
      },
      {
        route: 'GET /admin/v1/routing/providers',
        action: 'read',
        ok: 200,
        call: () => ({ path: '/routing/providers' }),
      },
      {
        route: 'PUT /admin/v1/routing',
        action: 'manage',
        ok: 200,
        call: () => ({ path: '/routing', body: { models: ['test/cheap', 'test/other'] } }),
      },
      {
        route: 'GET /admin/v1/account/limits',
        action: 'read',
        ok: 200,
        call: () => ({ path: '/account/limits' }),
      },
      {
        route: 'PATCH /admin/v1/account/limits',
        action: 'manage',
        ok: 200,
        call: () => ({ path: '/account/limits', body: { concurrency: 100 } }),
      },
      // The dashboard link: the owner's; an account with an identity has none to replace.
      {
        route: 'POST /admin/v1/account/link',
        action: 'link',
        ok: 409,
        link: 200,
        call: () => ({ path: '/account/link' }),
      },
      {
        route: 'DELETE /admin/v1/account/link',
        action: 'link',
        ok: 200,
        call: () => ({ path: '/account/link' }),
      },
      // Money, usage, activity.
      {
        route: 'GET /admin/v1/billing',
        action: 'read',
        ok: 200,
        call: () => ({ path: '/billing' }),
      },
      {
        route: 'GET /admin/v1/billing/ledger',
        action: 'read',
        ok: 200,
        call: () => ({ path: '/billing/ledger?kind=credit' }),
      },
      {
        // This server takes no deposits: whoever may top up learns that (404), the others get 403.
        route: 'GET /admin/v1/billing/deposit',
        action: 'billing',
        ok: 404,
        call: () => ({ path: '/billing/deposit' }),
      },
      {
        route: 'GET /admin/v1/billing/payments',
        action: 'read',
        ok: 200,
        call: () => ({ path: '/billing/payments' }),
      },
      {
        route: 'POST /admin/v1/billing/top-up',
        action: 'billing',
        ok: 200,
        call: () => ({ path: '/billing/top-up' }),
      },
      {
        route: 'GET /admin/v1/usage',
        action: 'read',
        ok: 200,
        call: () => ({ path: '/usage?groupBy=key' }),
      },
      {
        route: 'GET /admin/v1/activity',
        action: 'read',
        ok: 200,
        call: () => ({ path: '/activity' }),
      },
      {
        route: 'GET /admin/v1/activity/summary',
        action: 'read',
        ok: 200,
        call: () => ({ path: '/activity/summary' }),
      },
      // Playground (paid chat: the trial has its own tests).
      {
        route: 'GET /admin/v1/playground/trial',
        action: 'read',
        ok: 200,
        call: () => ({ path: '/playground/trial' }),
      },
      {
        route: 'POST /admin/v1/playground/chat',
        action: 'chat',
        ok: 200,
        call: () => ({
          path: '/playground/chat',
          body: { paid: true, model: 'test/cheap', messages: hello },
        }),
      },
      // Credit alerts (accounts with identity only).
      { route: 'GET /admin/v1/alerts', action: 'read', ok: 200, call: () => ({ path: '/alerts' }) },
      {
        route: 'PUT /admin/v1/alerts',
        action: 'manage',
        ok: 200,
        link: 403,
        call: () => ({ path: '/alerts', body: { thresholdUsd: '5', email: true, push: false } }),
      },
      {
        route: 'GET /admin/v1/alerts/vapid-public-key',
        action: 'read',
        ok: 200,
        call: () => ({ path: '/alerts/vapid-public-key' }),
      },
      {
        route: 'POST /admin/v1/alerts/push-subscriptions',
        action: 'read',
        ok: 201,
        link: 403,
        call: (cell) => ({
          path: '/alerts/push-subscriptions',
          body: { endpoint: `https://93.184.215.14/new-${cell.unique}`, keys: pushKeys },
        }),
      },
      {
        route: 'DELETE /admin/v1/alerts/push-subscriptions',
        action: 'read',
        ok: 200,
        object: true,
        link: 404,
        call: async (cell) => ({
          path: `/alerts/push-subscriptions?endpoint=${await fixtures.push(cell)}`,
        }),
      },
      // Support (open while suspended).
      {
        route: 'POST /admin/v1/support/tickets',
        action: 'support',
        ok: 201,
        call: () => ({ path: '/support/tickets', body: { subject: 'Help', body: 'Please.' } }),
      },
      {
        route: 'GET /admin/v1/support/tickets',
        action: 'support',
        ok: 200,
        call: () => ({ path: '/support/tickets' }),
      },
      {
        route: 'GET /admin/v1/support/tickets/{id}',
        action: 'support',
        ok: 200,
        object: true,
        call: async (cell) => ({ path: `/support/tickets/${await fixtures.ticket(cell)}` }),
      },
      {
        route: 'POST /admin/v1/support/tickets/{id}/messages',
        action: 'support',
        ok: 201,
        object: true,
        call: async (cell) => ({
          path: `/support/tickets/${await fixtures.ticket(cell)}/messages`,
          body: { body: 'More.' },
        }),
      },
    ]

    /** The status the rules give: the permission table (permissions.ts), suspension, ownership. */
    function expected(row: Row, actor: Actor): number {
      if (row.action === 'public') return actor === 'none' ? (row.none ?? row.ok) : row.ok
      if (actor === 'none') return row.none ?? 401
      // Revoking only takes access away: a suspended account's owner can still stop a leaked key or link.
      if (actor === 'suspended')
        return ['read', 'support', 'revoke', 'link'].includes(row.action) ? row.ok : 403
      if (actor === 'member')
        return row.action === 'read' || row.action === 'support' || row.action === 'chat'
          ? (row.member ?? row.ok)
          : 403
      if (actor === 'other') return row.object ? 404 : row.ok
      if (actor === 'link') return row.link ?? row.ok
      return row.ok
    }

    async function ownerSession(accountId: string): Promise<string> {
      const { sql, clock } = gw.app.operator
      const { token } = await openSession(
        sql,
        { accountId, userId: owners.get(accountId)! },
        3_600_000,
        clock.now(),
      )
      return `${SESSION_COOKIE}=${token}`
    }

    async function session(actor: Actor): Promise<string | undefined> {
      switch (actor) {
        case 'owner':
          return ownerSession(home)
        case 'member':
          return (await sessionFor(gw, home, 'member')).cookie
        case 'other':
          return ownerSession(other)
        case 'link':
          return (await sessionFor(gw, accountless)).cookie
        case 'suspended':
          return ownerSession(suspended)
        case 'none':
          return undefined
      }
    }

    function cellFor(actor: Actor): Cell {
      const unique = `${actor}-${++counter}`
      if (actor === 'link') return { accountId: accountless, identity: false, unique }
      if (actor === 'suspended') return { accountId: suspended, identity: true, unique }
      return { accountId: home, identity: true, unique }
    }

    test('every route of the OpenAPI document has a row', async () => {
      const spec = (await (await admin(gw, 'GET', '/admin/v1/openapi/json')).json()) as {
        paths: Record<string, Record<string, unknown>>
      }
      const documented = Object.entries(spec.paths).flatMap(([path, methods]) =>
        Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
      )
      expect(documented.length).toBeGreaterThan(40)
      expect(documented.sort()).toEqual(ROWS.map((row) => row.route).sort())
    })

    test('every route × every actor answers with the expected status', async () => {
      const wrong: string[] = []
      for (const row of ROWS) {
        const [method, template] = row.route.split(' ') as [string, string]
        for (const actor of ACTORS) {
          const cookie = await session(actor)
          const { path, body } = await row.call(cellFor(actor))
          const url = `/admin/v1${path}`
          expect(template.replace(/\{\w+\}/g, '[^/?]+')).toSatisfy((pattern: string) =>
            new RegExp(`^${pattern}(\\?|$)`).test(url),
          )
          const response = await admin(gw, method, url, { cookie, body })
          const text = await response.text()
          if (response.status !== expected(row, actor))
            wrong.push(
              `${row.route} as ${actor}: ${response.status} (expected ${expected(row, actor)}) ${text.slice(0, 160)}`,
            )
          // A refusal is in the error shape; another account's answers never show this account's objects.
          if (response.status >= 400) expect(JSON.parse(text).error.code).toBeString()
          if (actor === 'other')
            for (const id of homeObjects)
              if (text.includes(id)) wrong.push(`${row.route} as other shows ${id}`)
        }
      }
      expect(wrong).toEqual([])
    }, 60_000)
  })
