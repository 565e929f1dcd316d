/**
 * Credit alerts of accounts with identity: once the available balance falls below the account's
 * threshold, one e-mail (to the owner and admins) and one browser push (to every subscription of the
 * account) per crossing. Checked off the request path, after the record writer committed charges of
 * those accounts, against the admission store's live balance. Firing disarms the alert with one
 * conditional UPDATE (`WHERE alert_armed … RETURNING`), so of two processes that see the crossing only
 * one sends; a credit that brings the balance back to the threshold arms it again (rearm.ts).
 */
import type { Sql } from 'postgres'
import { nanoToUsd } from '../../../shared/money.ts'
import type { AdmissionStore } from '../../stores/admission/store.ts'
import { log } from '../../core/log.ts'
import type { Mailer } from '../people/mailer.ts'
import { sendPush, type StoredSubscription } from './push-sender.ts'
import type { VapidKeys } from './vapid-keys.ts'

export type AlertDeps = { sql: Sql; store: AdmissionStore; mailer: Mailer; vapid: VapidKeys; siteUrl: string }

type Candidate = { id: string; threshold: number }
type Fired = { alert_email: boolean; alert_push: boolean; alert_threshold_nano: number }

export class CreditAlerts {
  private queued = new Set<string>()
  private running: Promise<void> | undefined

  constructor(private readonly deps: AlertDeps) {}

  get vapidPublicKey(): string {
    return this.deps.vapid.publicKey
  }

  /**
   * Queues the accounts for a check; checks run one at a time, so a busy writer's flushes coalesce into
   * the next round instead of piling up. Never throws.
   */
  charged(accountIds: readonly string[]): void {
    for (const id of accountIds) this.queued.add(id)
    this.running ??= this.drain().finally(() => (this.running = undefined))
  }

  /** Resolves once every queued check has run (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running
  }

  private async drain(): Promise<void> {
    while (this.queued.size > 0) {
      const accountIds = [...this.queued]
      this.queued.clear()
      await this.check(accountIds).catch((error) => log.warn('credit alert check failed', { error }))
    }
  }

  /** Fires the alerts of these accounts whose available balance is below their armed threshold. */
  async check(accountIds: readonly string[]): Promise<void> {
    const candidates = await this.deps.sql<Candidate[]>`
      SELECT id, alert_threshold_nano AS threshold FROM accounts
      WHERE id = ANY(${accountIds as string[]}::text[]) AND kind = 'identity' AND alert_armed
        AND alert_threshold_nano IS NOT NULL AND (alert_email OR alert_push)`
    for (const candidate of candidates) {
      const live = await this.deps.store.snapshot(candidate.id)
      if (!live.loaded || live.availableNano >= candidate.threshold) continue
      const [fired] = await this.deps.sql<Fired[]>`
        UPDATE accounts SET alert_armed = false
        WHERE id = ${candidate.id} AND alert_armed AND alert_threshold_nano IS NOT NULL
        RETURNING alert_email, alert_push, alert_threshold_nano`
      if (fired) await this.send(candidate.id, fired, live.availableNano)
    }
  }

  private async send(accountId: string, fired: Fired, availableNano: number): Promise<void> {
    const balance = nanoToUsd(Math.max(0, availableNano))
    const threshold = nanoToUsd(fired.alert_threshold_nano)
    const where = this.deps.siteUrl ? ` at ${this.deps.siteUrl}` : ''
    log.info('credit alert', { accountId, balance, threshold })
    if (fired.alert_email) {
      for (const to of await this.recipients(accountId)) {
        await this.deps.mailer
          .send({
            to,
            subject: `Credit alert: balance below $${threshold}`,
            text:
              `The available balance of account ${accountId} is $${balance}, below your alert threshold of $${threshold}.\n\n` +
              `Requests are refused with insufficient_credits once it cannot cover them. The account owner can add credits in the dashboard${where}.\n\n` +
              'This alert is sent once; it is armed again when a credit brings the balance back to the threshold.',
          })
          .catch((error) => log.warn('credit alert mail failed', { accountId, error }))
      }
    }
    if (fired.alert_push) {
      const payload = JSON.stringify({
        type: 'credit_alert',
        title: `Balance below $${threshold}`,
        body: `Available balance: $${balance}. Add credits to keep requests running.`,
        accountId,
        balanceUsd: balance,
        thresholdUsd: threshold,
        url: this.deps.siteUrl || undefined,
      })
      await this.pushAll(accountId, payload)
    }
  }

  /** The owner's and admins' addresses: the people who look after the account's money and settings. */
  private async recipients(accountId: string): Promise<string[]> {
    const rows = await this.deps.sql<{ email: string }[]>`
      SELECT u.email FROM memberships m JOIN users u ON u.id = m.user_id
      WHERE m.account_id = ${accountId} AND m.role IN ('owner', 'admin') AND u.email IS NOT NULL
      ORDER BY m.role = 'owner' DESC, m.created_at`
    return rows.map((row) => row.email)
  }

  private async pushAll(accountId: string, payload: string): Promise<void> {
    const subscriptions = await this.deps.sql<StoredSubscription[]>`
      SELECT endpoint, p256dh, auth FROM push_subscriptions WHERE account_id = ${accountId}`
    for (const subscription of subscriptions) {
      const outcome = await sendPush(this.deps.vapid, subscription, payload).catch((error) => {
        log.warn('credit alert push failed', { accountId, error })
        return 'failed' as const
      })
      // 404/410: the browser dropped the subscription; it will never be delivered again.
      if (outcome === 'gone') await this.deps.sql`DELETE FROM push_subscriptions WHERE endpoint = ${subscription.endpoint} AND account_id = ${accountId}`
    }
  }
}
