/*
 * The dashboard's service worker for browser push: it shows the credit alert the server sends
 * (proxy/alerts/credit-alerts.ts: { type, title, body, accountId, balanceUsd, thresholdUsd, url }) and
 * opens the billing page when the notification is clicked. It caches nothing.
 */
self.addEventListener('install', () => self.skipWaiting())
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()))

self.addEventListener('push', (event) => {
  let alert = {}
  try {
    alert = event.data ? event.data.json() : {}
  } catch {
    alert = { body: event.data ? event.data.text() : '' }
  }
  const title = alert.title || 'Model Gateway'
  const body = alert.body || 'Your balance needs attention.'
  event.waitUntil(
    self.registration.showNotification(title, {
      body,
      tag:
        alert.type === 'credit_alert' && alert.accountId
          ? `credit-alert-${alert.accountId}`
          : undefined,
      data: { url: billingUrl(alert.url) },
    }),
  )
})

self.addEventListener('notificationclick', (event) => {
  event.notification.close()
  const url = (event.notification.data && event.notification.data.url) || '/dashboard/billing'
  event.waitUntil(
    self.clients.matchAll({ type: 'window', includeUncontrolled: true }).then((windows) => {
      for (const client of windows) {
        if (new URL(client.url).origin === self.location.origin && 'focus' in client) {
          client.navigate(url).catch(() => undefined)
          return client.focus()
        }
      }
      return self.clients.openWindow(url)
    }),
  )
})

/** The billing page on this site: the payload's site address is trusted only when it is this origin. */
function billingUrl(site) {
  try {
    const base = new URL(site || self.location.origin)
    return base.origin === self.location.origin
      ? new URL('/dashboard/billing', base).href
      : '/dashboard/billing'
  } catch {
    return '/dashboard/billing'
  }
}
