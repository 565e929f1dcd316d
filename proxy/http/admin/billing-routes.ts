/**
 * The account's money: the balance and open holds (`GET /admin/v1/billing`, any member), the ledger in
 * keyset pages (any member), and the top-up step (the owner only).
 */
import { Elysia } from 'elysia'
import { Billing, Ledger, LedgerQuery, TopUp } from '../../../shared/schemas/admin/billing.ts'
import { readLedger } from '../../accounts/usage/ledger-entries.ts'
import type { AdminDeps } from './admin-deps.ts'
import { requireSession } from './admin-session.ts'
import { billingView, topUpInstructions } from '../../accounts/billing.ts'

export function billingRoutes(deps: AdminDeps) {
  return new Elysia()
    .get(
      '/billing',
      async ({ request }) => billingView(deps, await requireSession(deps, request, 'read')),
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
    .post(
      '/billing/top-up',
      // The permission (owner only, not suspended) and the confirmed secrets are checked by topUpInstructions, naming the rule.
      async ({ request }) => topUpInstructions(deps, await requireSession(deps, request, 'read')),
      {
        response: TopUp,
        detail: {
          summary:
            'Top up (owner only; accountless accounts after confirming both secrets). Until payments exist: instructions to ask the operator',
        },
      },
    )
}
