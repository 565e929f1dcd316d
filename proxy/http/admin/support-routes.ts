/**
 * Support tickets of the session's account (action `support`: every member, also while the account is
 * suspended). Another account's ticket is 404, as an unknown one.
 */
import { Elysia } from 'elysia'
import {
  NewTicket,
  Ticket,
  TicketList,
  TicketReply,
} from '../../../shared/schemas/admin/support.ts'
import { ServiceError } from '../../../shared/errors.ts'
import {
  addMessage,
  listTickets,
  openTicket,
  requireTicket,
} from '../../accounts/support/tickets.ts'
import type { AdminDeps } from './admin-deps.ts'
import { requireSession } from './admin-session.ts'

export function supportRoutes(deps: AdminDeps) {
  return new Elysia({ prefix: '/support/tickets' })
    .post(
      '',
      async ({ request, body, set }) => {
        const session = await requireSession(deps, request, 'support')
        const ticket = await openTicket(
          deps.sql,
          { accountId: session.accountId, userId: session.userId },
          body,
        )
        set.status = 201
        return ticket
      },
      {
        body: NewTicket,
        response: { 201: Ticket },
        detail: { summary: 'Open a ticket (optionally about one of your requests)' },
      },
    )
    .get(
      '',
      async ({ request }) => {
        const session = await requireSession(deps, request, 'support')
        return { tickets: await listTickets(deps.sql, session.accountId) }
      },
      {
        response: TicketList,
        detail: { summary: "The account's tickets, most recently changed first" },
      },
    )
    .get(
      '/:id',
      async ({ request, params }) => {
        const session = await requireSession(deps, request, 'support')
        return (await requireTicket(deps.sql, session.accountId, params.id)).ticket
      },
      { response: Ticket, detail: { summary: 'A ticket with its messages' } },
    )
    .post(
      '/:id/messages',
      async ({ request, params, body, set }) => {
        const session = await requireSession(deps, request, 'support')
        if (
          !(await addMessage(
            deps.sql,
            { accountId: session.accountId, ticketId: params.id },
            'customer',
            body.body,
          ))
        ) {
          throw new ServiceError('not_found', `No ticket ${params.id} in this account.`)
        }
        set.status = 201
        return (await requireTicket(deps.sql, session.accountId, params.id)).ticket
      },
      {
        body: TicketReply,
        response: { 201: Ticket },
        detail: { summary: 'Reply to a ticket (reopens it)' },
      },
    )
}
