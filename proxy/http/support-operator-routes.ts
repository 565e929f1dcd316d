/**
 * The operator's side of support (under /operator/v1, behind the operator token of operator-routes.ts):
 * list tickets by status, read one, answer (optionally e-mailing the customer who opened it), close.
 */
import { Elysia } from 'elysia'
import { Type } from '@sinclair/typebox'
import { ServiceError } from '../../shared/errors.ts'
import { OperatorAnswer, TicketStatus } from '../../shared/schemas/admin/support.ts'
import { log } from '../core/log.ts'
import type { Mailer } from '../accounts/people/mailer.ts'
import {
  addMessage,
  closeTicket,
  listAllTickets,
  requireTicket,
  ticketEmail,
  type FoundTicket,
} from '../accounts/support/tickets.ts'
import type { AdminDeps } from './admin/admin-deps.ts'

export function supportOperatorRoutes(deps: AdminDeps) {
  const show = async (ticketId: string) =>
    operatorView(deps, await requireTicket(deps.sql, undefined, ticketId))
  return new Elysia({ prefix: '/support/tickets' })
    .get('', async ({ query }) => ({ tickets: await listAllTickets(deps.sql, query.status) }), {
      query: Type.Object({ status: Type.Optional(TicketStatus) }, { additionalProperties: false }),
    })
    .get('/:id', ({ params }) => show(params.id))
    .post(
      '/:id/answer',
      async ({ params, body }) => {
        if (!(await addMessage(deps.sql, { ticketId: params.id }, 'operator', body.body)))
          throw new ServiceError('not_found', `No ticket ${params.id}.`)
        const found = await requireTicket(deps.sql, undefined, params.id)
        const email = await ticketEmail(deps.sql, found.userId)
        const mailed =
          body.email !== false && email !== null
            ? await mailAnswer(deps.mailer, deps.config.PUBLIC_SITE_URL, email, found, body.body)
            : false
        return { ...(await operatorView(deps, found)), mailed }
      },
      { body: OperatorAnswer },
    )
    .post('/:id/close', async ({ params }) => {
      if (!(await closeTicket(deps.sql, params.id)))
        throw new ServiceError('not_found', `No ticket ${params.id}.`)
      return show(params.id)
    })
}

async function operatorView(deps: AdminDeps, found: FoundTicket) {
  return {
    ...found.ticket,
    accountId: found.accountId,
    email: await ticketEmail(deps.sql, found.userId),
  }
}

/** Tells the customer an answer is waiting; a mail that fails does not undo the answer (it is in the dashboard). */
async function mailAnswer(
  mailer: Mailer,
  siteUrl: string,
  to: string,
  found: FoundTicket,
  answer: string,
): Promise<boolean> {
  const link = siteUrl ? ` (${siteUrl.replace(/\/+$/, '')})` : ''
  try {
    await mailer.send({
      to,
      subject: `Re: ${found.ticket.subject} [${found.ticket.id}]`,
      text: `Support answered your ticket "${found.ticket.subject}" (${found.ticket.id}):\n\n${answer}\n\nRead the conversation and reply on the dashboard's support page${link}.`,
    })
    return true
  } catch (error) {
    log.warn('support answer mail failed', { ticketId: found.ticket.id, error })
    return false
  }
}
