/**
 * Card top-ups through Stripe Checkout. The owner asks for an amount within TOPUP_MIN_USD..TOPUP_MAX_USD;
 * a Checkout Session is created for it and recorded as a pending payment (the session id is the
 * payment's identity). Stripe's signed webhook events then move the payment: a completed, paid session
 * (or an asynchronous payment that succeeded) credits it, or holds it for the operator when it was paid
 * in another amount or currency than started; an expired session or a failed asynchronous
 * payment fails it; a fully refunded charge reverses it; a dispute suspends the account (the spec's
 * chargeback trigger) until the operator lifts it. Every event may arrive again, late, or out of order:
 * the payment's state decides what it still changes (payments.ts).
 */
import Stripe from 'stripe'
import { ServiceError } from '../../../shared/errors.ts'
import { nanoToUsd, usdToNano } from '../../../shared/money.ts'
import type { Config } from '../../core/config.ts'
import { log } from '../../core/log.ts'
import type { OperatorDeps } from '../operator-deps.ts'
import { suspendAccount } from '../suspension.ts'
import {
  creditPayment,
  failPayment,
  holdPayment,
  recordPayment,
  reversePayment,
  type Payment,
} from './payments.ts'

/** Nano-USD in one cent. */
const NANO_PER_CENT = 10_000_000

export type CardPayments = {
  stripe: Stripe
  webhookSecret: string
  minNano: number
  maxNano: number
}

/** Stripe when both of its settings are given; undefined turns card payments off. */
export function cardPayments(config: Config): CardPayments | undefined {
  if (!config.STRIPE_SECRET_KEY || !config.STRIPE_WEBHOOK_SECRET) return undefined
  const api = config.STRIPE_API_URL ? new URL(config.STRIPE_API_URL) : undefined
  const stripe = new Stripe(config.STRIPE_SECRET_KEY, {
    maxNetworkRetries: 2,
    timeout: 20_000,
    telemetry: false,
    ...(api && {
      host: api.hostname,
      port: api.port || (api.protocol === 'https:' ? 443 : 80),
      protocol: api.protocol.replace(':', '') as 'http' | 'https',
    }),
  })
  return {
    stripe,
    webhookSecret: config.STRIPE_WEBHOOK_SECRET,
    minNano: usdToNano(config.TOPUP_MIN_USD)!,
    maxNano: usdToNano(config.TOPUP_MAX_USD)!,
  }
}

/** Starts a card top-up of `amountNano` for the account; answers the Checkout page's address. */
export async function startCheckout(
  deps: Pick<OperatorDeps, 'sql'>,
  cards: CardPayments,
  input: { accountId: string; amountNano: number; returnUrl: string },
): Promise<{ payment: Payment; url: string }> {
  const { amountNano } = input
  if (
    !Number.isSafeInteger(amountNano) ||
    amountNano < cards.minNano ||
    amountNano > cards.maxNano ||
    amountNano % NANO_PER_CENT !== 0
  ) {
    throw new ServiceError(
      'invalid_request',
      `amountNano: a top-up is between USD ${nanoToUsd(cards.minNano)} and ${nanoToUsd(cards.maxNano)}, in whole cents.`,
      { param: 'amountNano' },
    )
  }
  const session = await cards.stripe.checkout.sessions.create({
    mode: 'payment',
    client_reference_id: input.accountId,
    metadata: { accountId: input.accountId },
    line_items: [
      {
        quantity: 1,
        price_data: {
          currency: 'usd',
          unit_amount: amountNano / NANO_PER_CENT,
          product_data: { name: 'Gateway credit' },
        },
      },
    ],
    success_url: `${input.returnUrl}?checkout=success`,
    cancel_url: `${input.returnUrl}?checkout=cancelled`,
  })
  if (!session.url) throw new Error('Stripe answered a Checkout Session without a URL')
  const payment = await recordPayment(deps.sql, {
    accountId: input.accountId,
    provider: 'stripe',
    externalId: session.id,
    amountNano,
    currency: 'usd',
  })
  return { payment, url: session.url }
}

export type WebhookAnswer = { status: number; body: Record<string, unknown> }

/**
 * A webhook delivery: the signature is checked on the raw body first (400 when it is missing, wrong or
 * older than five minutes, so nothing unsigned changes money); then the event is applied. Events the
 * gateway does not use are acknowledged (200) so Stripe stops sending them.
 */
export async function receiveStripeEvent(
  deps: Pick<OperatorDeps, 'sql' | 'store' | 'keys' | 'clock'>,
  cards: CardPayments,
  rawBody: string,
  signature: string | null,
): Promise<WebhookAnswer> {
  if (!signature) return refusal('The Stripe-Signature header is missing.')
  let event: Stripe.Event
  try {
    event = await cards.stripe.webhooks.constructEventAsync(rawBody, signature, cards.webhookSecret)
  } catch (error) {
    return refusal(`The signature does not verify: ${(error as Error).message}`)
  }
  const handled = await applyEvent(deps, event)
  if (handled === 'later')
    return {
      status: 409,
      body: {
        error: {
          code: 'conflict',
          message: `Event ${event.id} is about a payment not known yet (events out of order); send it again later.`,
        },
      },
    }
  return { status: 200, body: { received: true, handled } }
}

function refusal(message: string): WebhookAnswer {
  return { status: 400, body: { error: { code: 'invalid_request', message } } }
}

/**
 * Applies an event: true when it changed (or confirmed) a payment, false when it is not one the gateway
 * uses or not about its payments, 'later' when it is about a card payment whose completion has not
 * arrived yet (Stripe sends the event again after a 409).
 */
async function applyEvent(
  deps: Pick<OperatorDeps, 'sql' | 'store' | 'keys' | 'clock'>,
  event: Stripe.Event,
): Promise<boolean | 'later'> {
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded': {
      const session = event.data.object
      if (session.payment_status !== 'paid') return true // paid later: async_payment_succeeded
      const recorded = await knownSession(deps, session)
      if (!recorded) return false
      await deps.sql`
        UPDATE payments SET detail = detail || ${deps.sql.json({ paymentIntent: paymentIntentOf(session) } as never)}
        WHERE provider = 'stripe' AND external_id = ${session.id}`
      if (recorded === 'mismatch') await holdPayment(deps.sql, 'stripe', session.id)
      else await creditPayment(deps, 'stripe', session.id)
      return true
    }
    case 'checkout.session.expired':
    case 'checkout.session.async_payment_failed':
      await failPayment(deps.sql, 'stripe', event.data.object.id)
      return true
    case 'charge.refunded': {
      const charge = event.data.object
      const payment = await paymentOfIntent(deps, charge.payment_intent)
      if (!payment) return 'later'
      if (charge.amount_refunded < charge.amount) {
        log.warn('partial card refund: the balance is not changed; adjust it by hand if needed', {
          paymentId: payment.id,
          refundedCents: charge.amount_refunded,
          amountCents: charge.amount,
        })
        return true
      }
      await reversePayment(deps, 'stripe', payment.external_id, 'card refund')
      return true
    }
    case 'charge.dispute.created': {
      const dispute = event.data.object
      const payment = await paymentOfIntent(deps, dispute.payment_intent)
      if (!payment) return 'later'
      // A dispute suspends once: delivered again after an operator lifted the suspension, it changes
      // nothing. It is noted on its payment after the suspension, so a failure between the two leaves
      // the delivery to be sent again and suspend.
      const [noted] = await deps.sql`
        SELECT 1 FROM payments WHERE id = ${payment.id} AND detail->'disputes' ? ${dispute.id}`
      if (noted) return true
      await suspendAccount(deps, payment.account_id, 'chargeback', `Stripe dispute ${dispute.id}`)
      await deps.sql`
        UPDATE payments
        SET detail = jsonb_set(detail, '{disputes}', coalesce(detail->'disputes', '[]'::jsonb) || to_jsonb(${dispute.id}::text))
        WHERE id = ${payment.id}`
      return true
    }
    default:
      return false
  }
}

/**
 * The session's payment, recorded when it was started here; a session started elsewhere is logged.
 * 'mismatch' when the paid session names another currency or amount than the one started (the money
 * received is not the credit asked for): it is held for the operator, who releases or rejects it.
 */
async function knownSession(
  deps: Pick<OperatorDeps, 'sql'>,
  session: Stripe.Checkout.Session,
): Promise<boolean | 'mismatch'> {
  const [row] = await deps.sql<{ amount_nano: number; currency: string }[]>`
    SELECT amount_nano, currency FROM payments WHERE provider = 'stripe' AND external_id = ${session.id}`
  if (!row) {
    log.warn('a paid Checkout Session this gateway did not start: not credited', {
      sessionId: session.id,
      accountId: session.metadata?.accountId ?? null,
    })
    return false
  }
  const currency = session.currency ?? row.currency
  const amount = session.amount_total
  if (
    currency.toLowerCase() !== row.currency ||
    (amount !== null && amount !== undefined && amount * NANO_PER_CENT !== row.amount_nano)
  ) {
    log.warn(
      'a Checkout Session paid another amount or currency than it was started for: held for the operator',
      { sessionId: session.id, paidAmount: amount, paidCurrency: currency },
    )
    return 'mismatch'
  }
  return true
}

const paymentIntentOf = (session: Stripe.Checkout.Session) =>
  typeof session.payment_intent === 'string' ? session.payment_intent : session.payment_intent?.id

async function paymentOfIntent(
  deps: Pick<OperatorDeps, 'sql'>,
  intent: string | Stripe.PaymentIntent | null,
): Promise<{ id: string; account_id: string; external_id: string } | undefined> {
  const id = typeof intent === 'string' ? intent : intent?.id
  if (!id) return undefined
  const [row] = await deps.sql<{ id: string; account_id: string; external_id: string }[]>`
    SELECT id, account_id, external_id FROM payments
    WHERE provider = 'stripe' AND detail->>'paymentIntent' = ${id}`
  if (!row)
    log.warn('a card event for a payment this gateway does not know (yet)', { paymentIntent: id })
  return row
}
