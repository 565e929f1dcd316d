/**
 * Credit alerts of the session's account: read the settings (every member), change them (owner and
 * admins; accounts with identity only), register and remove this browser's push subscription, and the
 * VAPID public key the browser subscribes with.
 */
import { Elysia } from 'elysia'
import {
  AlertChanges,
  AlertSettings,
  PushSubscription,
  PushSubscriptionRef,
  VapidPublicKey,
} from '../../../shared/schemas/admin/alerts.ts'
import { Done } from '../../../shared/schemas/admin/session.ts'
import {
  addPushSubscription,
  mailDelivery,
  readAlertSettings,
  removePushSubscription,
  saveAlertSettings,
} from '../../accounts/alerts/alert-settings.ts'
import type { AdminDeps } from './admin-deps.ts'
import { requireSession } from './admin-session.ts'

export function alertRoutes(deps: AdminDeps) {
  return new Elysia({ prefix: '/alerts' })
    .get(
      '',
      async ({ request }) => {
        const session = await requireSession(deps, request, 'read')
        return readAlertSettings(deps.sql, session.accountId, mailDelivery(deps.mailer))
      },
      { response: AlertSettings, detail: { summary: 'Credit alert settings' } },
    )
    .put(
      '',
      async ({ request, body }) => {
        const session = await requireSession(deps, request, 'manage')
        return saveAlertSettings(deps, session.accountId, body)
      },
      {
        body: AlertChanges,
        response: AlertSettings,
        detail: { summary: 'Set the threshold and the channels (accounts with identity)' },
      },
    )
    .get(
      '/vapid-public-key',
      async ({ request }) => {
        await requireSession(deps, request, 'read')
        return { publicKey: deps.alerts.vapidPublicKey }
      },
      {
        response: VapidPublicKey,
        detail: { summary: 'The application server key for pushManager.subscribe' },
      },
    )
    .post(
      '/push-subscriptions',
      async ({ request, body, set }) => {
        const session = await requireSession(deps, request, 'read')
        await addPushSubscription(
          deps.sql,
          { accountId: session.accountId, userId: session.userId },
          body,
          deps.config.PUSH_ALLOW_PRIVATE_ENDPOINTS,
        )
        set.status = 201
        return { ok: true as const }
      },
      {
        body: PushSubscription,
        response: { 201: Done },
        detail: { summary: "Register this browser's push subscription" },
      },
    )
    .delete(
      '/push-subscriptions',
      async ({ request, query }) => {
        const session = await requireSession(deps, request, 'read')
        await removePushSubscription(deps.sql, session.accountId, query.endpoint)
        return { ok: true as const }
      },
      {
        query: PushSubscriptionRef,
        response: Done,
        detail: { summary: 'Remove a push subscription (?endpoint=…)' },
      },
    )
}
