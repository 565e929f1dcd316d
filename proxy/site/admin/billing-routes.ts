/** The account's balance (`GET /admin/v1/billing`, any member) and the top-up step (the owner only). */
import { Elysia } from 'elysia'
import { Billing, TopUp } from '../../../shared/schemas/admin/billing.ts'
import type { AdminDeps } from './admin-deps.ts'
import { requireSession } from './admin-session.ts'
import { billingView, topUpInstructions } from './billing.ts'

export function billingRoutes(deps: AdminDeps) {
  return new Elysia()
    .get(
      '/billing',
      async ({ request }) => billingView(deps, await requireSession(deps, request, 'read')),
      { response: Billing, detail: { summary: 'Balance, open holds and available credit, and whether this session may top up' } },
    )
    .post(
      '/billing/top-up',
      // The permission (owner only, not suspended) and the confirmed secrets are checked by topUpInstructions, naming the rule.
      async ({ request }) => topUpInstructions(deps, await requireSession(deps, request, 'read')),
      { response: TopUp, detail: { summary: 'Top up (owner only; accountless accounts after confirming both secrets). Until payments exist: instructions to ask the operator' } },
    )
}
