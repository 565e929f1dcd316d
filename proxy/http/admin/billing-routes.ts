/**
 * The account's money: the balance and open holds (`GET /admin/v1/billing`, any member), the ledger in
 * keyset pages (any member), and the top-up step (the owner only).
 */
import { Elysia } from 'elysia'
import { Type } from '@sinclair/typebox'
import {
  Billing,
  Deposit,
  Ledger,
  LedgerQuery,
  Payments,
  TopUp,
  TopUpRequest,
} from '../../../shared/schemas/admin/billing.ts'
import { listPayments } from '../../accounts/payments/payments.ts'
import { siteBase } from '../../accounts/people/site-url.ts'
import { readLedger } from '../../accounts/usage/ledger-entries.ts'
import type { AdminDeps } from './admin-deps.ts'
import { requireSession } from './admin-session.ts'
import { billingView, depositView, startTopUp } from '../../accounts/billing.ts'

export function billingRoutes(deps: AdminDeps) {
  return new Elysia()
    .get(
      '/billing',
      async ({ request }) => billingView(deps, await requireSession(deps, request, 'read'), deps),
      {
        response: Billing,
        detail: {
          summary:
            'Balance, open holds (by key) and available credit, and whether this session may top up',
        },
      },
    )
    .get(
      '/billing/ledger',
      async ({ request, query }) => {
        const session = await requireSession(deps, request, 'read')
        return readLedger(deps.sql, session.accountId, query)
      },
      {
        query: LedgerQuery,
        response: Ledger,
        detail: {
          summary:
            "The account's ledger (credits, charges, write-offs, adjustments), newest first, in keyset pages",
        },
      },
    )
    .get(
      '/billing/deposit',
      // The permission (owner only) and the confirmed secrets are checked by depositView, naming the rule.
      async ({ request }) =>
        depositView(deps, await requireSession(deps, request, 'read'), deps.deposits),
      {
        response: Deposit,
        detail: {
          summary:
            "The account's stablecoin deposit address, its chain, accepted tokens and the confirmations a transfer needs (owner only; accountless accounts after confirming both secrets)",
        },
      },
    )
    .get(
      '/billing/payments',
      async ({ request }) => {
        const session = await requireSession(deps, request, 'read')
        const payments = await listPayments(deps.sql, session.accountId)
        return {
          payments: payments.map(({ accountId: _, externalId: __, ...payment }) => payment),
        }
      },
      {
        response: Payments,
        detail: {
          summary: "The account's payments (card top-ups, deposits) and their states, newest first",
        },
      },
    )
    .post(
      '/billing/top-up',
      // The permission (owner only, not suspended) and the confirmed secrets are checked by startTopUp, naming the rule.
      async ({ request, body }) =>
        startTopUp(deps, await requireSession(deps, request, 'read'), deps.cards, {
          amountNano: body?.amountNano,
          returnUrl: `${siteBase(deps.config.PUBLIC_SITE_URL, request)}/dashboard/billing`,
        }),
      {
        body: Type.Optional(TopUpRequest),
        response: TopUp,
        detail: {
          summary:
            'Top up (owner only; accountless accounts after confirming both secrets): a card checkout of amountNano, or, on a server without payments, instructions to ask the operator',
        },
      },
    )
}
