/**
 * Stripe's webhook endpoint on the site server: `POST /webhooks/stripe` with the raw body, which the
 * signature covers (so the body is read as text, never parsed first). 404 when card payments are off.
 */
import { Elysia } from 'elysia'
import { ServiceError } from '../../shared/errors.ts'
import { receiveStripeEvent } from '../accounts/payments/stripe.ts'
import { siteError } from '../pipeline/respond.ts'
import type { AdminDeps } from './admin/admin-deps.ts'

export function stripeWebhookRoute(deps: AdminDeps) {
  return new Elysia().post(
    '/webhooks/stripe',
    async ({ request }) => {
      if (!deps.cards)
        return siteError(
          new ServiceError('not_found', 'Card payments are not configured on this server.'),
        )
      const answer = await receiveStripeEvent(
        deps,
        deps.cards,
        await request.text(),
        request.headers.get('stripe-signature'),
      )
      return Response.json(answer.body, { status: answer.status })
    },
    { parse: 'none', detail: { hide: true } },
  )
}
