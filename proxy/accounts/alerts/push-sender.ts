/**
 * Sends one browser push message: web-push encrypts the payload for the subscription (aes128gcm) and
 * signs the VAPID Authorization header; the request itself goes out with fetch, bounded in time, once
 * the endpoint's host still resolves to public addresses only. A push service answering 404 or 410 says
 * the subscription is gone for good.
 */
import { checkPushEndpoint } from './push-endpoint.ts'
import type { VapidKeys } from './vapid-keys.ts'

export type StoredSubscription = { endpoint: string; p256dh: string; auth: string }

export type PushOutcome = 'sent' | 'gone' | 'failed' | 'refused'

const PUSH_TIMEOUT_MS = 10_000
/** A day: an alert is still worth showing when the browser comes online within it. */
const PUSH_TTL_SECONDS = 86_400

export async function sendPush(
  vapid: VapidKeys,
  subscription: StoredSubscription,
  payload: string,
  allowPrivate: boolean,
): Promise<PushOutcome> {
  try {
    await checkPushEndpoint(subscription.endpoint, allowPrivate)
  } catch {
    return 'refused'
  }
  // Loaded with the first alert: processes that never send one never carry web-push.
  const { default: webpush } = await import('web-push')
  const details = webpush.generateRequestDetails(
    {
      endpoint: subscription.endpoint,
      keys: { p256dh: subscription.p256dh, auth: subscription.auth },
    },
    payload,
    {
      vapidDetails: vapid,
      TTL: PUSH_TTL_SECONDS,
      urgency: 'high',
      contentEncoding: 'aes128gcm',
    },
  )
  const headers = Object.fromEntries(
    Object.entries(details.headers).map(([name, value]) => [name, String(value)]),
  )
  const response = await fetch(details.endpoint, {
    method: details.method,
    headers,
    body: details.body ? new Uint8Array(details.body) : undefined,
    redirect: 'manual',
    signal: AbortSignal.timeout(PUSH_TIMEOUT_MS),
  })
  await response.body?.cancel()
  if (response.status === 404 || response.status === 410) return 'gone'
  return response.ok ? 'sent' : 'failed'
}
