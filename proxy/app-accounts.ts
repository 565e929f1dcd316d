/**
 * Builds the account side of the service for createApp: the mailer, credit alerts, card and stablecoin
 * payments, sanctions screening, the playground, and what the admin API and account routes depend on.
 */
import type { OperatorDeps } from './accounts/operator-deps.ts'
import type { RedisClient } from './stores/redis-client.ts'
import { cardPayments } from './accounts/payments/stripe.ts'
import { SanctionsList } from './accounts/payments/sanctions.ts'
import { depositSettings } from './accounts/payments/deposits.ts'
import { DepositWatcher } from './accounts/payments/deposit-watcher.ts'
import { ConfigSchema, type Config } from './core/config.ts'
import type { Gateway } from './pipeline/gateway.ts'
import type { RecordWriter } from './stores/ledger/record-writer.ts'
import type { AdminDeps } from './http/admin/admin-deps.ts'
import type { AddressLimiter } from './stores/address-limits.ts'
import { log } from './core/log.ts'
import { createMailer, outboxPath } from './accounts/people/mailer.ts'
import { resolveAltchaKey } from './accounts/people/altcha-key.ts'
import { CreditAlerts } from './accounts/alerts/credit-alerts.ts'
import { resolveVapidKeys } from './accounts/alerts/vapid-keys.ts'
import { MemoryChatLock, RedisChatLock } from './accounts/playground/chat-lock.ts'
import { checkFreeChatModel, freeChatModel } from './accounts/playground/free-model.ts'

export type AccountSide = {
  admin: AdminDeps
  alerts: CreditAlerts
  /** Watches the chain for deposits, when deposits and their RPC endpoint are set. */
  watcher?: DepositWatcher
}

export async function buildAccountSide(
  config: Config,
  parts: {
    operator: OperatorDeps
    gateway: Gateway
    writer: RecordWriter
    limiter: AddressLimiter
    redis?: RedisClient
    apiPort: () => number
  },
): Promise<AccountSide> {
  const { operator, gateway, writer, limiter, redis, apiPort } = parts
  const { sql, store } = operator
  const mailer = createMailer({
    smtpUrl: config.SMTP_URL,
    from: config.MAIL_FROM,
    dataDir: config.DATA_DIR,
  })
  if (mailer.kind === 'outbox')
    log.warn(
      `SMTP_URL is not set: mail (sign-in links, invitations, credit alerts) is written to ${outboxPath(config.DATA_DIR)}, not sent`,
    )
  const alerts = new CreditAlerts({
    sql,
    store,
    mailer,
    vapid: await resolveVapidKeys(config),
    siteUrl: config.PUBLIC_SITE_URL,
    retry: { baseMs: config.ALERT_RETRY_BASE_MS, maxAttempts: config.ALERT_MAX_ATTEMPTS },
    allowPrivatePushEndpoints: config.PUSH_ALLOW_PRIVATE_ENDPOINTS,
  })
  // Credit alerts are checked off the request path, after the writer committed an account's charges.
  writer.onCharged = (accountIds) => alerts.charged(accountIds)
  checkFreeChatModel(
    gateway.catalog,
    config.FREE_CHAT_MODEL,
    config.FREE_CHAT_MODEL === ConfigSchema.properties.FREE_CHAT_MODEL.default,
  )
  const admin: AdminDeps = {
    ...operator,
    config,
    apiPort,
    mailer,
    limiter,
    altchaKey: await resolveAltchaKey(config.ALTCHA_HMAC_KEY, config.DATA_DIR),
    playground: {
      gateway,
      lock: redis ? await RedisChatLock.create(redis) : new MemoryChatLock(),
      freeMessages: config.FREE_CHAT_MESSAGES,
      freeModel: freeChatModel(gateway.catalog, config.FREE_CHAT_MODEL),
      // A non-streaming answer ends within the upstream timeout; the lock outlives only a process that died.
      lockTtlMs: config.UPSTREAM_TIMEOUT_MS + 60_000,
    },
    alerts,
    cards: cardPayments(config),
    deposits: depositSettings(config),
    sanctions: config.SANCTIONS_LIST_FILE
      ? await SanctionsList.open(config.SANCTIONS_LIST_FILE)
      : undefined,
  }
  const watcher =
    admin.deposits && config.DEPOSIT_RPC_URL
      ? new DepositWatcher(operator, admin.deposits, config.DEPOSIT_RPC_URL, admin.sanctions)
      : undefined
  if (admin.deposits && !watcher)
    log.warn(
      'deposit addresses are shown to accounts, but no DEPOSIT_RPC_URL is set: credit received transfers with bun run admin -- credit',
    )
  return { admin, alerts, watcher }
}
