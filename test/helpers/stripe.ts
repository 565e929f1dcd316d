/**
 * Stripe's API as the SDK calls it for Checkout, on 127.0.0.1 (the card network cannot be reached from
 * here), and webhook deliveries signed with the SDK's own test helper.
 */
import Stripe from 'stripe'

/** Stripe's Checkout Sessions endpoint as the SDK calls it: a form-encoded POST answered with a session. */
/**
 * Stripe's API for Checkout on 127.0.0.1 (the card network cannot be reached from here): the SDK's
 * POST /v1/checkout/sessions gets a session whose URL is this server's own payment page, which, when its
 * Pay button is pressed, sends the signed `checkout.session.completed` event to `webhook` (when set) and
 * returns the browser to the session's success URL, as Stripe's page does.
 */
export function stripeStandIn() {
  const created: URLSearchParams[] = []
  const sessions = new Map<string, URLSearchParams>()
  let count = 0
  const standIn = {
    created,
    webhook: undefined as { url: string; secret: string } | undefined,
    server: undefined as unknown as Bun.Server<undefined>,
    url: '',
  }
  const server: Bun.Server<undefined> = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request): Promise<Response> {
      const url = new URL(request.url)
      const paying = /^\/pay\/([\w-]+)$/.exec(url.pathname)?.[1]
      if (paying && request.method === 'GET')
        return new Response(
          `<!doctype html><title>Test checkout</title><h1>Test checkout</h1><form method="post"><button>Pay</button></form>`,
          { headers: { 'content-type': 'text/html' } },
        )
      if (paying && request.method === 'POST') {
        const form = sessions.get(paying)
        if (!form) return new Response('unknown session', { status: 404 })
        if (standIn.webhook) {
          const cents = Number(form.get('line_items[0][price_data][unit_amount]'))
          const event = await signedEvent(
            completedSession(paying, `pi_${paying}`, cents),
            standIn.webhook.secret,
          )
          await fetch(standIn.webhook.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'stripe-signature': event.signature },
            body: event.payload,
          })
        }
        return Response.redirect(form.get('success_url')!, 303)
      }
      if (request.method !== 'POST' || url.pathname !== '/v1/checkout/sessions')
        return Response.json({ error: { message: 'not here' } }, { status: 404 })
      const form = new URLSearchParams(await request.text())
      created.push(form)
      const id = `cs_test_${++count}_${crypto.randomUUID().slice(0, 8)}`
      sessions.set(id, form)
      return Response.json({
        id,
        object: 'checkout.session',
        url: `http://127.0.0.1:${server.port}/pay/${id}`,
        amount_total: Number(form.get('line_items[0][price_data][unit_amount]')),
        payment_status: 'unpaid',
        client_reference_id: form.get('client_reference_id'),
      })
    },
  })
  standIn.server = server
  standIn.url = `http://127.0.0.1:${server.port}`
  return standIn
}

const signer = new Stripe('sk_test_signing_only')

/** A webhook event's body and its Stripe-Signature header for `secret`. */
export async function signedEvent(
  event: Record<string, unknown>,
  secret: string,
  timestamp?: number,
): Promise<{ payload: string; signature: string }> {
  const payload = JSON.stringify({ object: 'event', api_version: '2025-01-01', ...event })
  const signature = await signer.webhooks.generateTestHeaderStringAsync({
    payload,
    secret,
    timestamp,
  })
  return { payload, signature }
}

/** A paid `checkout.session.completed` event. */
export const completedSession = (sessionId: string, intent: string, cents: number) => ({
  id: `evt_${crypto.randomUUID()}`,
  type: 'checkout.session.completed',
  data: {
    object: {
      id: sessionId,
      object: 'checkout.session',
      payment_status: 'paid',
      payment_intent: intent,
      amount_total: cents,
    },
  },
})
