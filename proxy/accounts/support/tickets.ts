/**
 * Support tickets: a customer (any member, also of a suspended account) opens one with a subject, a first
 * message and optionally the ID of a request of the account; customers and operators then add messages.
 * Status: `open` (waiting for the operator), `answered` (waiting for the customer), `closed`. A customer's
 * message reopens an answered or closed ticket. Every customer read is scoped by account: another
 * account's ticket is the same 404 as an unknown one.
 */
import type { Sql } from 'postgres'
import { ServiceError } from '../../../shared/errors.ts'
import type {
  NewTicket,
  Ticket,
  TicketMessage,
  TicketStatus,
  TicketSummary,
} from '../../../shared/schemas/admin/support.ts'
import { newTicketId } from '../ids.ts'

const LIST_LIMIT = 200

type TicketRow = {
  id: string
  account_id: string
  user_id: string | null
  subject: string
  request_id: string | null
  status: TicketStatus
  created_at: Date
  updated_at: Date
}

export type Author = { accountId: string; userId: string | null }

export async function openTicket(sql: Sql, author: Author, input: NewTicket): Promise<Ticket> {
  if (
    input.requestId !== undefined &&
    !(await requestOfAccount(sql, author.accountId, input.requestId))
  ) {
    // 400 rather than 404: the route exists and the ticket is what is refused, for the field named.
    throw new ServiceError(
      'invalid_request',
      `Request ID: no request ${input.requestId} in this account. Copy it from the Activity page or a response's x-request-id header; new requests appear within seconds.`,
      { param: 'requestId' },
    )
  }
  const id = newTicketId()
  await sql.begin(async (tx) => {
    await tx`
      INSERT INTO support_tickets (id, account_id, user_id, subject, request_id)
      VALUES (${id}, ${author.accountId}, ${author.userId}, ${input.subject}, ${input.requestId ?? null})`
    await tx`INSERT INTO support_messages (ticket_id, author, body) VALUES (${id}, 'customer', ${input.body})`
  })
  return (await readTicket(sql, author.accountId, id))!.ticket
}

/** Whether the request ID is one of the account's model or image requests. */
async function requestOfAccount(sql: Sql, accountId: string, requestId: string): Promise<boolean> {
  const rows = await sql`
    SELECT 1 FROM request_logs WHERE request_id = ${requestId} AND account_id = ${accountId}
    UNION ALL
    SELECT 1 FROM image_requests WHERE request_id = ${requestId} AND account_id = ${accountId}
    LIMIT 1`
  return rows.length > 0
}

/** The account's tickets, most recently changed first. */
export async function listTickets(sql: Sql, accountId: string): Promise<TicketSummary[]> {
  const rows = await sql<TicketRow[]>`
    SELECT * FROM support_tickets WHERE account_id = ${accountId} ORDER BY updated_at DESC LIMIT ${LIST_LIMIT}`
  return rows.map(summary)
}

export type FoundTicket = { ticket: Ticket; accountId: string; userId: string | null }

/** The ticket with its messages, and who opened it; `accountId` undefined: any account's (the operator's view). */
export async function readTicket(
  sql: Sql,
  accountId: string | undefined,
  ticketId: string,
): Promise<FoundTicket | undefined> {
  const [row] = await sql<TicketRow[]>`
    SELECT * FROM support_tickets WHERE id = ${ticketId} ${accountId === undefined ? sql`` : sql`AND account_id = ${accountId}`}`
  if (!row) return undefined
  const messages = await sql<
    { id: number; author: TicketMessage['author']; body: string; created_at: Date }[]
  >`
    SELECT id, author, body, created_at FROM support_messages WHERE ticket_id = ${ticketId} ORDER BY id`
  return {
    ticket: {
      ...summary(row),
      messages: messages.map((message) => ({
        id: message.id,
        author: message.author,
        body: message.body,
        createdAt: message.created_at.toISOString(),
      })),
    },
    accountId: row.account_id,
    userId: row.user_id,
  }
}

export async function requireTicket(
  sql: Sql,
  accountId: string | undefined,
  ticketId: string,
): Promise<FoundTicket> {
  const ticket = await readTicket(sql, accountId, ticketId)
  if (!ticket)
    throw new ServiceError(
      'not_found',
      `No ticket ${ticketId}${accountId === undefined ? '' : ' in this account'}.`,
    )
  return ticket
}

/** Adds a message; the ticket's new status says whose turn it is. False when the ticket is not there (in that account). */
export async function addMessage(
  sql: Sql,
  scope: { accountId?: string; ticketId: string },
  author: TicketMessage['author'],
  body: string,
): Promise<boolean> {
  const status: TicketStatus = author === 'customer' ? 'open' : 'answered'
  return sql.begin(async (tx) => {
    const updated = await tx`
      UPDATE support_tickets SET status = ${status}, updated_at = now()
      WHERE id = ${scope.ticketId} ${scope.accountId === undefined ? tx`` : tx`AND account_id = ${scope.accountId}`}
      RETURNING id`
    if (updated.length === 0) return false
    await tx`INSERT INTO support_messages (ticket_id, author, body) VALUES (${scope.ticketId}, ${author}, ${body})`
    return true
  })
}

export async function closeTicket(sql: Sql, ticketId: string): Promise<boolean> {
  const rows =
    await sql`UPDATE support_tickets SET status = 'closed', updated_at = now() WHERE id = ${ticketId} RETURNING id`
  return rows.length > 0
}

export type OperatorTicketRow = TicketSummary & { accountId: string; email: string | null }

/** Every account's tickets for the operator, oldest change first (the longest waiting on top). */
export async function listAllTickets(
  sql: Sql,
  status: TicketStatus | undefined,
): Promise<OperatorTicketRow[]> {
  const rows = await sql<(TicketRow & { email: string | null })[]>`
    SELECT t.*, u.email FROM support_tickets t LEFT JOIN users u ON u.id = t.user_id
    ${status === undefined ? sql`` : sql`WHERE t.status = ${status}`}
    ORDER BY t.updated_at LIMIT ${LIST_LIMIT}`
  return rows.map((row) => ({ ...summary(row), accountId: row.account_id, email: row.email }))
}

/** The address to tell of an answer: the e-mail of the user who opened the ticket (none for a dashboard-link session). */
export async function ticketEmail(sql: Sql, userId: string | null): Promise<string | null> {
  if (!userId) return null
  const [user] = await sql<{ email: string | null }[]>`SELECT email FROM users WHERE id = ${userId}`
  return user?.email ?? null
}

function summary(row: TicketRow): TicketSummary {
  return {
    id: row.id,
    subject: row.subject,
    status: row.status,
    requestId: row.request_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  }
}
