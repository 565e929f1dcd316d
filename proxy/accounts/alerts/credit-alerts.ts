/**
 * Credit alerts of accounts with identity: once the available balance falls below the account's
 * threshold, one e-mail (to the owner and admins) and one browser push (to every subscription of the
 * account) per crossing. Checked off the request path, after the record writer committed charges of
 * those accounts, against the admission store's live balance. Firing disarms the alert with one
 * conditional UPDATE (`WHERE alert_armed … RETURNING`), so of two processes that see the crossing only
 * one fires; a credit that brings the balance back to the threshold arms it again (rearm.ts).
 *
 * What a firing sends is written in the same transaction to `alert_deliveries`, an outbox: a delivery is
 * marked sent only once the mail server accepted it or the push service took it, and is otherwise tried
 * again after a growing pause (`ALERT_RETRY_BASE_MS`, doubled each time, at most an hour), up to
 * `ALERT_MAX_ATTEMPTS`, then marked failed for the dashboard to show. A delivery is claimed for a while
 * before it is tried, so processes share the outbox without sending one twice; one claimed by a process
 * that died is tried again when its claim runs out.
 */
import type { Sql } from 'postgres'
import { nanoToUsd } from '../../../shared/money.ts'
import type { AdmissionStore } from '../../stores/admission/store.ts'
import { log } from '../../core/log.ts'
import type { Mailer } from '../people/mailer.ts'
import { sendPush, type PushOutcome, type StoredSubscription } from './push-sender.ts'
import type { VapidKeys } from './vapid-keys.ts'

export type AlertDeps = {
  sql: Sql
  store: AdmissionStore
  mailer: Mailer
  vapid: VapidKeys
  siteUrl: string
  retry: { baseMs: number; maxAttempts: number }
  /** PUSH_ALLOW_PRIVATE_ENDPOINTS: send to loopback and private push endpoints (local testing). */
  allowPrivatePushEndpoints: boolean
}

type Candidate = { id: string; threshold: number }
type Fired = { alert_email: boolean; alert_push: boolean; alert_threshold_nano: number }
type Delivery = {
  id: number
  account_id: string
  channel: 'email' | 'push'
  recipient: string
  message: { subject?: string; text?: string; payload?: string }
  attempts: number
}

/** How long a claimed delivery is left to the process that claimed it. */
const CLAIM_MS = 120_000
const MAX_PAUSE_MS = 3_600_000
const BATCH = 20

export class CreditAlerts {
  private queued = new Set<string>()
  private running: Promise<void> | undefined
  private deliverAgain = false
  private timer: ReturnType<typeof setInterval> | undefined

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
    this.kick()
  }

  /** Tries due deliveries every `intervalMs` (retries, and what another process left). */
  start(intervalMs: number): void {
    this.timer ??= setInterval(() => {
      this.deliverAgain = true
      this.kick()
    }, intervalMs)
    this.timer.unref?.()
  }

  stop(): void {
    clearInterval(this.timer)
    this.timer = undefined
  }

  /** Resolves once every queued check and the deliveries it made have run (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running
  }

  private kick(): void {
    this.running ??= this.drain().finally(() => (this.running = undefined))
  }

  private async drain(): Promise<void> {
    while (this.queued.size > 0 || this.deliverAgain) {
      const accountIds = [...this.queued]
      this.queued.clear()
      this.deliverAgain = false
      if (accountIds.length > 0)
        await this.check(accountIds).catch((error) =>
          log.warn('credit alert check failed', { error }),
        )
      await this.deliver().catch((error) => log.warn('credit alert deliveries not sent', { error }))
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
      await this.fire(candidate.id, live.availableNano)
    }
  }

  /** Disarms the alert and writes its deliveries, in one transaction: a firing is never half recorded. */
  private async fire(accountId: string, availableNano: number): Promise<void> {
    await this.deps.sql.begin(async (tx) => {
      const [fired] = await tx<Fired[]>`
        UPDATE accounts SET alert_armed = false
        WHERE id = ${accountId} AND alert_armed AND alert_threshold_nano IS NOT NULL
        RETURNING alert_email, alert_push, alert_threshold_nano`
      if (!fired) return
      const balance = nanoToUsd(Math.max(0, availableNano))
      const threshold = nanoToUsd(fired.alert_threshold_nano)
      log.info('credit alert', { accountId, balance, threshold })
      const rows: { account_id: string; channel: string; recipient: string; message: unknown }[] =
        []
      if (fired.alert_email) {
        const message = this.mail(accountId, balance, threshold)
        for (const to of await recipients(tx as unknown as Sql, accountId))
          rows.push({ account_id: accountId, channel: 'email', recipient: to, message })
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
        const subscriptions = await tx<
          { endpoint: string }[]
        >`SELECT endpoint FROM push_subscriptions WHERE account_id = ${accountId}`
        for (const { endpoint } of subscriptions)
          rows.push({
            account_id: accountId,
            channel: 'push',
            recipient: endpoint,
            message: { payload },
          })
      }
      if (rows.length > 0) {
        await tx`INSERT INTO alert_deliveries ${tx(
          rows.map((row) => ({ ...row, message: tx.json(row.message as never) })),
          'account_id',
          'channel',
          'recipient',
          'message',
        )}`
      }
    })
  }

  private mail(
    accountId: string,
    balance: string,
    threshold: string,
  ): { subject: string; text: string } {
    const where = this.deps.siteUrl ? ` at ${this.deps.siteUrl}` : ''
    return {
      subject: `Credit alert: balance below $${threshold}`,
      text:
        `The available balance of account ${accountId} is $${balance}, below your alert threshold of $${threshold}.\n\n` +
        `Requests are refused with insufficient_credits once it cannot cover them. The account owner can add credits in the dashboard${where}.\n\n` +
        'This alert is sent once; it is armed again when a credit brings the balance back to the threshold.',
    }
  }

  /** Sends the deliveries that are due, a batch at a time, each claimed first. */
  async deliver(): Promise<void> {
    for (;;) {
      const due = await this.deps.sql<Delivery[]>`
        UPDATE alert_deliveries SET attempts = attempts + 1, next_attempt_at = now() + ${CLAIM_MS} * interval '1 millisecond'
        WHERE id IN (
          SELECT id FROM alert_deliveries WHERE state = 'pending' AND next_attempt_at <= now()
          ORDER BY next_attempt_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
        RETURNING id, account_id, channel, recipient, message, attempts`
      if (due.length === 0) return
      for (const delivery of due) await this.attempt(delivery)
      if (due.length < BATCH) return
    }
  }

  private async attempt(delivery: Delivery): Promise<void> {
    let failure: string | undefined
    let final = false
    try {
      if (delivery.channel === 'email') {
        await this.deps.mailer.send({
          to: delivery.recipient,
          subject: delivery.message.subject!,
          text: delivery.message.text!,
        })
      } else {
        const outcome = await this.push(delivery)
        if (outcome === 'gone')
          [failure, final] = ['the browser removed its push subscription', true]
        else if (outcome === 'refused')
          [failure, final] = ['the push endpoint is no longer a public address', true]
        else if (outcome === 'failed') failure = 'the push service refused the message'
      }
    } catch (error) {
      failure = error instanceof Error ? error.message : String(error)
    }
    const { sql, retry } = this.deps
    if (failure === undefined) {
      await sql`UPDATE alert_deliveries SET state = 'sent', sent_at = now(), last_error = NULL WHERE id = ${delivery.id}`
      return
    }
    log.warn('credit alert delivery failed', {
      accountId: delivery.account_id,
      channel: delivery.channel,
      attempt: delivery.attempts,
      error: failure,
    })
    if (final || delivery.attempts >= retry.maxAttempts) {
      await sql`UPDATE alert_deliveries SET state = 'failed', last_error = ${failure.slice(0, 500)} WHERE id = ${delivery.id}`
      return
    }
    const pauseMs = Math.min(MAX_PAUSE_MS, retry.baseMs * 2 ** (delivery.attempts - 1))
    await sql`
      UPDATE alert_deliveries SET last_error = ${failure.slice(0, 500)}, next_attempt_at = now() + ${pauseMs} * interval '1 millisecond'
      WHERE id = ${delivery.id}`
  }

  private async push(delivery: Delivery): Promise<PushOutcome> {
    const [subscription] = await this.deps.sql<StoredSubscription[]>`
      SELECT endpoint, p256dh, auth FROM push_subscriptions WHERE endpoint = ${delivery.recipient} AND account_id = ${delivery.account_id}`
    if (!subscription) return 'gone'
    const outcome = await sendPush(
      this.deps.vapid,
      subscription,
      delivery.message.payload!,
      this.deps.allowPrivatePushEndpoints,
    )
    // 404/410: the browser dropped the subscription; it will never be delivered again.
    if (outcome === 'gone')
      await this.deps
        .sql`DELETE FROM push_subscriptions WHERE endpoint = ${subscription.endpoint} AND account_id = ${delivery.account_id}`
    return outcome
  }
}

/** The owner's and admins' addresses: the people who look after the account's money and settings. */
export async function recipients(sql: Sql, accountId: string): Promise<string[]> {
  const rows = await sql<{ email: string }[]>`
    SELECT u.email FROM memberships m JOIN users u ON u.id = m.user_id
    WHERE m.account_id = ${accountId} AND m.role IN ('owner', 'admin') AND u.email IS NOT NULL
    ORDER BY m.role = 'owner' DESC, m.created_at`
  return rows.map((row) => row.email)
}
