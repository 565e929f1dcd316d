/**
 * This browser's push subscription for credit alerts: the notification permission, the service worker
 * (`/push-sw.js`, which shows the alert), a subscription with the server's VAPID key, and its
 * registration with the admin API. Push needs a secure context (https, or localhost).
 */
import { query } from '@solidjs/router'
import type { VapidPublicKey } from '../../../../shared/schemas/admin/alerts.ts'
import { api, ApiError, get, queryString } from '../../api.ts'

const WORKER = '/push-sw.js'
/** The browser's push service answers a subscription within seconds; without a network it may never. */
const SUBSCRIBE_TIMEOUT_MS = 20_000

export function pushSupported(): boolean {
  return (
    typeof window !== 'undefined' &&
    window.isSecureContext &&
    'serviceWorker' in navigator &&
    'PushManager' in window &&
    'Notification' in window
  )
}

export function notificationPermission(): NotificationPermission {
  return 'Notification' in window ? Notification.permission : 'denied'
}

/** This browser's subscription, if it has one (without registering anything). */
export async function currentSubscription(): Promise<PushSubscription | null> {
  if (!pushSupported()) return null
  const registration = await navigator.serviceWorker.getRegistration(WORKER)
  return (await registration?.pushManager.getSubscription()) ?? null
}

/** This browser's subscription as a query, read again after it is turned on or off here. */
export const getPushSubscription = query(() => currentSubscription(), 'pushSubscription')

/** Asks for permission, subscribes with the server's key and registers the subscription. */
export async function enablePush(): Promise<void> {
  const permission = await Notification.requestPermission()
  if (permission === 'denied')
    throw new Error(
      'Notifications are blocked for this site. Allow them in the browser’s site settings, then try again.',
    )
  if (permission !== 'granted')
    throw new Error('Notifications were not allowed. Try again and choose Allow.')
  const registration = await navigator.serviceWorker.register(WORKER, { scope: '/' })
  await navigator.serviceWorker.ready
  const { publicKey } = await get<VapidPublicKey>('/alerts/vapid-public-key')
  const applicationServerKey = base64UrlBytes(publicKey)
  let subscription = await registration.pushManager.getSubscription()
  // A subscription made with another server key cannot be reused: subscribe again.
  if (subscription && !sameBytes(subscription.options.applicationServerKey, applicationServerKey)) {
    await subscription.unsubscribe()
    subscription = null
  }
  subscription ??= await withTimeout(
    registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey }),
    'The browser’s push service did not answer. Check the connection and try again.',
  )
  await api('POST', '/alerts/push-subscriptions', subscription.toJSON())
}

/** Stops alerts to this browser: the server forgets the endpoint, the browser drops the subscription. */
export async function disablePush(): Promise<void> {
  const subscription = await currentSubscription()
  if (!subscription) return
  await api(
    'DELETE',
    `/alerts/push-subscriptions${queryString({ endpoint: subscription.endpoint })}`,
  ).catch((error: unknown) => {
    // Already gone on the server (another account now, or removed): unsubscribing is still right.
    if (!(error instanceof ApiError && error.status === 404)) throw error
  })
  await subscription.unsubscribe()
}

function withTimeout<T>(promise: Promise<T>, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(message)), SUBSCRIBE_TIMEOUT_MS)),
  )
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

function base64UrlBytes(text: string): Uint8Array<ArrayBuffer> {
  const base64 = text
    .replace(/-/g, '+')
    .replace(/_/g, '/')
    .padEnd(Math.ceil(text.length / 4) * 4, '=')
  return Uint8Array.from(atob(base64), (char) => char.charCodeAt(0))
}

function sameBytes(key: ArrayBuffer | null, bytes: Uint8Array): boolean {
  if (!key) return false
  const other = new Uint8Array(key)
  return other.length === bytes.length && other.every((value, index) => value === bytes[index])
}
