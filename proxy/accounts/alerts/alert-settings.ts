/**
 * An account's credit-alert settings and browser push subscriptions, as the admin API reads and changes
 * them. Only accounts with identity have alerts (the spec's rule: an accountless account has nobody to
 * tell); their settings read as not eligible and changes are refused.
 */
import type { Sql } from 'postgres'
import { ServiceError } from '../../../shared/errors.ts'
import { nanoToUsd, usdToNano } from '../../../shared/money.ts'
import type {
  AlertChanges,
  AlertSettings,
  PushSubscription,
} from '../../../shared/schemas/admin/alerts.ts'
import { loadAccount } from '../../stores/admission/load-account.ts'
import type { AdmissionStore } from '../../stores/admission/store.ts'
import type { Mailer } from '../people/mailer.ts'
import { recipients } from './credit-alerts.ts'
import { checkPushEndpoint } from './push-endpoint.ts'

type Row = {
  kind: 'accountless' | 'identity'
  alert_threshold_nano: number | null
  alert_email: boolean
  alert_push: boolean
  alert_armed: boolean
  subscriptions: number
}

type DeliveryRow = {
  channel: 'email' | 'push'
  recipient: string
  state: 'pending' | 'sent' | 'failed'
  attempts: number
  last_error: string | null
  created_at: Date
  sent_at: Date | null
}

export async function readAlertSettings(
  sql: Sql,
  accountId: string,
  mailDelivery: AlertSettings['mailDelivery'],
): Promise<AlertSettings> {
  const [row] = await sql<Row[]>`
    SELECT kind, alert_threshold_nano, alert_email, alert_push, alert_armed,
           (SELECT count(*) FROM push_subscriptions p WHERE p.account_id = a.id)::int AS subscriptions
    FROM accounts a WHERE id = ${accountId}`
  if (!row) throw new ServiceError('not_found', `No account ${accountId}.`)
  const deliveries = await sql<DeliveryRow[]>`
    SELECT channel, recipient, state, attempts, last_error, created_at, sent_at FROM alert_deliveries
    WHERE account_id = ${accountId} ORDER BY created_at DESC, id DESC LIMIT 10`
  return {
    eligible: row.kind === 'identity',
    thresholdUsd: row.alert_threshold_nano === null ? null : nanoToUsd(row.alert_threshold_nano),
    thresholdNano: row.alert_threshold_nano,
    email: row.alert_email,
    push: row.alert_push,
    armed: row.alert_armed,
    pushSubscriptions: row.subscriptions,
    mailDelivery,
    deliveries: deliveries.map((delivery) => ({
      channel: delivery.channel,
      // A push endpoint is a capability URL: only its service's host is shown.
      to: delivery.channel === 'email' ? delivery.recipient : new URL(delivery.recipient).host,
      state: delivery.state,
      attempts: delivery.attempts,
      lastError: delivery.last_error,
      createdAt: delivery.created_at.toISOString(),
      sentAt: delivery.sent_at?.toISOString() ?? null,
    })),
  }
}

/**
 * Saves the settings. The alert is armed only if the balance is at or above the new threshold now:
 * setting a threshold the balance is already below sends nothing (the owner is looking at the balance);
 * the alert arms once a credit lifts the balance over it.
 */
export async function saveAlertSettings(
  deps: { sql: Sql; store: AdmissionStore; mailer: Mailer },
  accountId: string,
  changes: AlertChanges,
): Promise<AlertSettings> {
  await requireIdentity(deps.sql, accountId)
  if (changes.email && (await recipients(deps.sql, accountId)).length === 0) {
    throw new ServiceError(
      'invalid_request',
      'email: no owner or admin of this account has an e-mail address to send alerts to. Sign in with e-mail (or invite an admin who has one), or use browser push.',
      { param: 'email' },
    )
  }
  const thresholdNano = changes.thresholdUsd === null ? null : usdToNano(changes.thresholdUsd)
  if (thresholdNano === undefined || thresholdNano === 0) {
    throw new ServiceError(
      'invalid_request',
      'thresholdUsd: must be a USD amount above 0 (or null to turn the alert off).',
      { param: 'thresholdUsd' },
    )
  }
  let armed = true
  if (thresholdNano !== null) {
    let live = await deps.store.snapshot(accountId)
    if (!live.loaded) {
      await loadAccount(deps.sql, deps.store, accountId)
      live = await deps.store.snapshot(accountId)
    }
    armed = live.availableNano >= thresholdNano
  }
  await deps.sql`
    UPDATE accounts SET alert_threshold_nano = ${thresholdNano}, alert_email = ${changes.email}, alert_push = ${changes.push}, alert_armed = ${armed}
    WHERE id = ${accountId}`
  return readAlertSettings(deps.sql, accountId, mailDelivery(deps.mailer))
}

export const mailDelivery = (mailer: Mailer): AlertSettings['mailDelivery'] =>
  mailer.kind === 'smtp' ? 'smtp' : 'file'

/** Registers (or moves to this account) a browser's push subscription. */
export async function addPushSubscription(
  sql: Sql,
  owner: { accountId: string; userId: string | null },
  subscription: PushSubscription,
  allowPrivateEndpoints: boolean,
): Promise<void> {
  await requireIdentity(sql, owner.accountId)
  await checkPushEndpoint(subscription.endpoint, allowPrivateEndpoints)
  if (Buffer.from(subscription.keys.p256dh, 'base64url').length !== 65) {
    throw new ServiceError(
      'invalid_request',
      'keys.p256dh: not a P-256 public key (65 bytes, base64url) as the browser gives it.',
      { param: 'keys.p256dh' },
    )
  }
  if (Buffer.from(subscription.keys.auth, 'base64url').length !== 16) {
    throw new ServiceError(
      'invalid_request',
      'keys.auth: not a push auth secret (16 bytes, base64url) as the browser gives it.',
      { param: 'keys.auth' },
    )
  }
  // One endpoint is one browser profile: registering it again replaces its keys and owner.
  await sql`
    INSERT INTO push_subscriptions (endpoint, account_id, user_id, p256dh, auth)
    VALUES (${subscription.endpoint}, ${owner.accountId}, ${owner.userId}, ${subscription.keys.p256dh}, ${subscription.keys.auth})
    ON CONFLICT (endpoint) DO UPDATE SET account_id = excluded.account_id, user_id = excluded.user_id,
      p256dh = excluded.p256dh, auth = excluded.auth, created_at = now()`
}

export async function removePushSubscription(
  sql: Sql,
  accountId: string,
  endpoint: string,
): Promise<void> {
  const rows =
    await sql`DELETE FROM push_subscriptions WHERE endpoint = ${endpoint} AND account_id = ${accountId} RETURNING 1`
  if (rows.length === 0)
    throw new ServiceError('not_found', 'No such push subscription in this account.')
}

async function requireIdentity(sql: Sql, accountId: string): Promise<void> {
  const [account] = await sql<{ kind: string }[]>`SELECT kind FROM accounts WHERE id = ${accountId}`
  if (!account) throw new ServiceError('not_found', `No account ${accountId}.`)
  if (account.kind !== 'identity') {
    throw new ServiceError(
      'forbidden',
      'Credit alerts are for accounts with identity: claim this account with an e-mail address or a wallet first.',
    )
  }
}
