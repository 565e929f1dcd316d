// Support tickets: customers open them (optionally about one of their requests), read and reply; other
// accounts see 404; suspended accounts can still write; operators list, answer (e-mailing the customer)
// and close them through the operator API and `bun run admin`.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type {
  OperatorTicket,
  Ticket,
  TicketList,
} from '../../../../shared/schemas/admin/support.ts'
import { admin, sessionFor } from '../../../helpers/admin.ts'
import { startTestGateway, type TestGateway } from '../../../helpers/gateway.ts'
import { describeWith } from '../../../helpers/services.ts'
import { startSmtpServer, type TestSmtp } from '../../../helpers/smtp.ts'
import { runAdminCli } from '../../../helpers/admin-cli.ts'

type ErrorBody = { error: { code: string; message: string; param: string | null } }

describeWith('postgres', 'support tickets', () => {
  let gw: TestGateway
  let smtp: TestSmtp
  beforeAll(async () => {
    smtp = await startSmtpServer()
    gw = await startTestGateway({
      store: 'memory',
      database: 'postgres',
      env: { SMTP_URL: smtp.url, PUBLIC_SITE_URL: 'http://site.test' },
    })
  })
  afterAll(async () => {
    await gw.close()
    await smtp.close()
  })

  const operator = (method: string, path: string, body?: unknown) =>
    gw.app.site.handle(
      new Request(`http://site.test/operator/v1${path}`, {
        method,
        headers: {
          authorization: 'Bearer test-operator-token',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    )

  /** A request of the account that made it to the request log. */
  async function requestOf(accountId: string): Promise<string> {
    const response = await gw.chat((await gw.key(accountId)).key, {
      model: 'test/cheap',
      messages: [{ role: 'user', content: 'hi' }],
    })
    await response.arrayBuffer()
    await gw.app.gateway.writer.drain()
    return response.headers.get('x-request-id')!
  }

  test('a customer opens a ticket about one of the account’s requests, reads it and replies', async () => {
    const accountId = await gw.account('1')
    const { cookie } = await sessionFor(gw, accountId, 'member')
    const requestId = await requestOf(accountId)
    const opened = await admin(gw, 'POST', '/admin/v1/support/tickets', {
      cookie,
      body: { subject: 'Odd answer', body: 'The answer was cut.', requestId },
    })
    expect(opened.status).toBe(201)
    const ticket = (await opened.json()) as Ticket
    expect(ticket).toMatchObject({
      subject: 'Odd answer',
      status: 'open',
      requestId,
      messages: [{ author: 'customer', body: 'The answer was cut.' }],
    })
    expect(ticket.id).toStartWith('tkt_')

    const list = (await (
      await admin(gw, 'GET', '/admin/v1/support/tickets', { cookie })
    ).json()) as TicketList
    expect(list.tickets.map((item) => item.id)).toEqual([ticket.id])
    const replied = await admin(gw, 'POST', `/admin/v1/support/tickets/${ticket.id}/messages`, {
      cookie,
      body: { body: 'It happens with streams.' },
    })
    expect(replied.status).toBe(201)
    expect(((await replied.json()) as Ticket).messages.map((message) => message.body)).toEqual([
      'The answer was cut.',
      'It happens with streams.',
    ])
    const read = (await (
      await admin(gw, 'GET', `/admin/v1/support/tickets/${ticket.id}`, { cookie })
    ).json()) as Ticket
    expect(read.messages).toHaveLength(2)
  })

  test('a request ID that is not the account’s is refused by name (400), also another account’s', async () => {
    const accountId = await gw.account('1')
    const { cookie } = await sessionFor(gw, accountId)
    const othersRequest = await requestOf(await gw.account('1'))
    for (const requestId of [othersRequest, 'req_unknown']) {
      const response = await admin(gw, 'POST', '/admin/v1/support/tickets', {
        cookie,
        body: { subject: 'x', body: 'y', requestId },
      })
      expect(response.status).toBe(400)
      const body = (await response.json()) as ErrorBody
      expect(body.error.param).toBe('requestId')
      // Worded for the person filling the form: the field's label, not its wire name.
      expect(body.error.message).toStartWith(`Request ID: no request ${requestId} in this account.`)
      expect(body.error.message).not.toContain('requestId')
    }
    // A ticket without a request ID needs none.
    expect(
      (
        await admin(gw, 'POST', '/admin/v1/support/tickets', {
          cookie,
          body: { subject: 'General', body: 'A question.' },
        })
      ).status,
    ).toBe(201)
  })

  test('an image request of the account is a valid request ID', async () => {
    const accountId = await gw.account('1')
    const { cookie } = await sessionFor(gw, accountId)
    const { id: keyId } = await gw.key(accountId)
    await gw.app.operator.sql`
      INSERT INTO image_requests (request_id, account_id, key_id, model, images, variant, hold_nano, status, cost_deadline)
      VALUES ('req_image_1', ${accountId}, ${keyId}, 'test/image', 1, '1024x1024/standard', 1000, 'charged', now() + interval '1 hour')`
    const response = await admin(gw, 'POST', '/admin/v1/support/tickets', {
      cookie,
      body: { subject: 'Image', body: 'Charged twice?', requestId: 'req_image_1' },
    })
    expect(response.status).toBe(201)
  })

  test("another account's ticket is 404 for reading and replying", async () => {
    const { cookie } = await sessionFor(gw, await gw.account('1'))
    const ticket = (await (
      await admin(gw, 'POST', '/admin/v1/support/tickets', {
        cookie,
        body: { subject: 'Mine', body: 'Private.' },
      })
    ).json()) as Ticket
    const other = await sessionFor(gw, await gw.account('1'), 'owner')
    expect(
      (await admin(gw, 'GET', `/admin/v1/support/tickets/${ticket.id}`, { cookie: other.cookie }))
        .status,
    ).toBe(404)
    expect(
      (
        await admin(gw, 'POST', `/admin/v1/support/tickets/${ticket.id}/messages`, {
          cookie: other.cookie,
          body: { body: 'hi' },
        })
      ).status,
    ).toBe(404)
    expect(
      (
        (await (
          await admin(gw, 'GET', '/admin/v1/support/tickets', { cookie: other.cookie })
        ).json()) as TicketList
      ).tickets,
    ).toEqual([])
    expect(
      (await admin(gw, 'GET', '/admin/v1/support/tickets/tkt_missing', { cookie })).status,
    ).toBe(404)
  })

  test('a suspended account can still open, read and reply; signed-out browsers cannot', async () => {
    const accountId = await gw.account('1')
    const { cookie } = await sessionFor(gw, accountId, 'member')
    await gw.app.operator.sql`UPDATE accounts SET status = 'suspended' WHERE id = ${accountId}`
    const opened = await admin(gw, 'POST', '/admin/v1/support/tickets', {
      cookie,
      body: { subject: 'Why suspended?', body: 'Please explain.' },
    })
    expect(opened.status).toBe(201)
    const { id } = (await opened.json()) as Ticket
    expect((await admin(gw, 'GET', `/admin/v1/support/tickets/${id}`, { cookie })).status).toBe(200)
    expect(
      (
        await admin(gw, 'POST', `/admin/v1/support/tickets/${id}/messages`, {
          cookie,
          body: { body: 'Still waiting.' },
        })
      ).status,
    ).toBe(201)
    expect((await admin(gw, 'GET', '/admin/v1/support/tickets')).status).toBe(401)
    expect(
      (
        await admin(gw, 'POST', '/admin/v1/support/tickets', {
          cookie,
          body: { subject: 'x', body: 'y' },
          origin: 'https://evil.test',
        })
      ).status,
    ).toBe(403)
  })

  test('fields are checked by name', async () => {
    const { cookie } = await sessionFor(gw, await gw.account('1'))
    for (const [body, param] of [
      [{ body: 'no subject' }, 'subject'],
      [{ subject: '', body: 'x' }, 'subject'],
      [{ subject: 'x', body: '' }, 'body'],
      [{ subject: 'x'.repeat(201), body: 'x' }, 'subject'],
      [{ subject: 'x', body: 'y', priority: 'high' }, 'priority'],
    ] as const) {
      const response = await admin(gw, 'POST', '/admin/v1/support/tickets', { cookie, body })
      expect(response.status).toBe(400)
      expect(((await response.json()) as ErrorBody).error.param).toBe(param)
    }
  })

  describe('operators', () => {
    test('list by status, answer (the customer gets an e-mail and sees the answer), close; a reply reopens', async () => {
      const accountId = await gw.account('1')
      const email = `customer-${accountId}@people.test`
      const { cookie } = await sessionFor(gw, accountId, 'owner', email)
      const ticket = (await (
        await admin(gw, 'POST', '/admin/v1/support/tickets', {
          cookie,
          body: { subject: 'Refund', body: 'Please refund.' },
        })
      ).json()) as Ticket

      const open = (await (await operator('GET', '/support/tickets?status=open')).json()) as {
        tickets: OperatorTicket[]
      }
      expect(open.tickets.find((item) => item.id === ticket.id)).toMatchObject({
        accountId,
        email,
        status: 'open',
      })
      const shown = (await (
        await operator('GET', `/support/tickets/${ticket.id}`)
      ).json()) as OperatorTicket
      expect(shown.messages.map((message) => message.body)).toEqual(['Please refund.'])

      const answered = await operator('POST', `/support/tickets/${ticket.id}/answer`, {
        body: 'Done: refunded.',
      })
      expect(answered.status).toBe(200)
      expect((await answered.json()) as OperatorTicket & { mailed: boolean }).toMatchObject({
        status: 'answered',
        mailed: true,
      })
      const mail = await smtp.next(email)
      expect(mail.text).toContain('Done: refunded.')
      expect(mail.text).toContain(ticket.id)
      const seen = (await (
        await admin(gw, 'GET', `/admin/v1/support/tickets/${ticket.id}`, { cookie })
      ).json()) as Ticket
      expect(seen).toMatchObject({
        status: 'answered',
        messages: [{ author: 'customer' }, { author: 'operator', body: 'Done: refunded.' }],
      })
      expect(
        (
          (await (await operator('GET', '/support/tickets?status=open')).json()) as {
            tickets: OperatorTicket[]
          }
        ).tickets.some((item) => item.id === ticket.id),
      ).toBe(false)

      const quiet = await operator('POST', `/support/tickets/${ticket.id}/answer`, {
        body: 'One more thing.',
        email: false,
      })
      expect(((await quiet.json()) as { mailed: boolean }).mailed).toBe(false)

      expect(
        (
          (await (
            await operator('POST', `/support/tickets/${ticket.id}/close`)
          ).json()) as OperatorTicket
        ).status,
      ).toBe('closed')
      await admin(gw, 'POST', `/admin/v1/support/tickets/${ticket.id}/messages`, {
        cookie,
        body: { body: 'Not received yet.' },
      })
      expect(
        ((await (await operator('GET', `/support/tickets/${ticket.id}`)).json()) as OperatorTicket)
          .status,
      ).toBe('open')
    })

    test('unknown tickets are 404; a wrong status filter names its field; the token is required', async () => {
      expect((await operator('GET', '/support/tickets/tkt_missing')).status).toBe(404)
      expect(
        (await operator('POST', '/support/tickets/tkt_missing/answer', { body: 'x' })).status,
      ).toBe(404)
      expect((await operator('POST', '/support/tickets/tkt_missing/close')).status).toBe(404)
      const bad = await operator('GET', '/support/tickets?status=pending')
      expect(bad.status).toBe(400)
      expect(((await bad.json()) as ErrorBody).error.param).toBe('status')
      const anonymous = await gw.app.site.handle(
        new Request('http://site.test/operator/v1/support/tickets'),
      )
      expect(anonymous.status).toBe(401)
    })

    test('the admin CLI lists, shows, answers and closes tickets', async () => {
      const accountId = await gw.account('1')
      const { cookie } = await sessionFor(gw, accountId, 'owner', `cli-${accountId}@people.test`)
      const ticket = (await (
        await admin(gw, 'POST', '/admin/v1/support/tickets', {
          cookie,
          body: { subject: 'CLI', body: 'From the dashboard.' },
        })
      ).json()) as Ticket
      gw.app.listen()
      // The server's own address (PUBLIC_SITE_URL names a host that does not resolve here).
      const siteUrl = gw.app.site.server!.url.toString().replace(/\/$/, '')
      const run = async (...args: string[]) => {
        const env = { SITE_URL: siteUrl, ADMIN_TOKEN: 'test-operator-token' }
        const { code, stderr, json } = await runAdminCli(env, args)
        expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
        return json as Record<string, unknown>
      }
      const listed = (await run('support', 'list', '--status', 'open')) as {
        tickets: OperatorTicket[]
      }
      expect(listed.tickets.some((item) => item.id === ticket.id)).toBe(true)
      expect(((await run('support', 'show', ticket.id)) as OperatorTicket).subject).toBe('CLI')
      const answered = (await run(
        'support',
        'answer',
        ticket.id,
        '--body',
        'Answered from the CLI.',
        '--no-mail',
      )) as OperatorTicket & { mailed: boolean }
      expect(answered).toMatchObject({ status: 'answered', mailed: false })
      expect(answered.messages.at(-1)).toMatchObject({
        author: 'operator',
        body: 'Answered from the CLI.',
      })
      expect(((await run('support', 'close', ticket.id)) as OperatorTicket).status).toBe('closed')
    })
  })
})
