/**
 * Schemas of support tickets: a subject, a first message and optionally the ID of the request it is about
 * (which must be one of the account's requests), then a thread of customer and operator messages.
 * Shared by the admin API (customers), the operator API and the dashboard.
 */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable } from './common.ts'

const Body = Type.String({ minLength: 1, maxLength: 20_000 })

export const TicketStatus = Type.Union([
  Type.Literal('open'),
  Type.Literal('answered'),
  Type.Literal('closed'),
])
export type TicketStatus = Static<typeof TicketStatus>

export const NewTicket = Type.Object(
  {
    subject: Type.String({ minLength: 1, maxLength: 200 }),
    body: Body,
    /** A request ID of this account (from a response's x-request-id, or the activity list). */
    requestId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  },
  { additionalProperties: false },
)
export type NewTicket = Static<typeof NewTicket>

export const TicketReply = Type.Object({ body: Body }, { additionalProperties: false })
export type TicketReply = Static<typeof TicketReply>

export const TicketMessage = Type.Object({
  id: Type.Integer(),
  author: Type.Union([Type.Literal('customer'), Type.Literal('operator')]),
  body: Type.String(),
  createdAt: Type.String(),
})
export type TicketMessage = Static<typeof TicketMessage>

export const TicketSummary = Type.Object({
  id: Type.String(),
  subject: Type.String(),
  status: TicketStatus,
  requestId: Nullable(Type.String()),
  createdAt: Type.String(),
  updatedAt: Type.String(),
})
export type TicketSummary = Static<typeof TicketSummary>

export const Ticket = Type.Composite([
  TicketSummary,
  Type.Object({ messages: Type.Array(TicketMessage) }),
])
export type Ticket = Static<typeof Ticket>

export const TicketList = Type.Object({ tickets: Type.Array(TicketSummary) })
export type TicketList = Static<typeof TicketList>

/** The operator's view adds who opened the ticket. */
export const OperatorTicket = Type.Composite([
  Ticket,
  Type.Object({ accountId: Type.String(), email: Nullable(Type.String()) }),
])
export type OperatorTicket = Static<typeof OperatorTicket>

export const OperatorAnswer = Type.Object(
  {
    body: Body,
    /** E-mail the customer that an answer is waiting (default true; needs an e-mail address on the ticket). */
    email: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)
export type OperatorAnswer = Static<typeof OperatorAnswer>
