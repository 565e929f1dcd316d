/**
 * Every setting of the service: one environment variable each, declared here once with its default
 * and validated at boot. Nothing else in the code reads `process.env`, except the catalog's provider
 * key variables, which the catalog names.
 */
import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { USD_AMOUNT_PATTERN, usdToNano } from '../../shared/money.ts'
import { conflicts } from './config-checks.ts'
import { parseNetworks, type Networks } from './networks.ts'

const Port = Type.Integer({ minimum: 0, maximum: 65535 })
const Positive = Type.Integer({ minimum: 1 })
const Usd = Type.String({ pattern: USD_AMOUNT_PATTERN })

export const ConfigSchema = Type.Object({
  HOST: Type.String({ default: '127.0.0.1', description: 'Address both servers bind to.' }),
  PORT: Type.Integer({ ...Port, default: 8080, description: 'API server port.' }),
  SITE_PORT: Type.Integer({
    ...Port,
    default: 8081,
    description: 'Site server port (dashboard, admin and operator API).',
  }),
  PUBLIC_API_URL: Type.String({
    default: '',
    description: 'Public URL of the API server, when behind a proxy.',
  }),
  PUBLIC_SITE_URL: Type.String({
    default: '',
    description: 'Public URL of the site server, when behind a proxy.',
  }),
  TRUSTED_PROXIES: Type.String({
    default: '',
    description:
      'Proxies and load balancers in front of the servers (CIDRs or addresses, comma-separated); a request from one is attributed to the address it forwarded for. Empty: the socket address.',
  }),
  TRUSTED_PROXY_HEADER: Type.Union(
    [Type.Literal('auto'), Type.Literal('x-forwarded-for'), Type.Literal('forwarded')],
    {
      default: 'auto',
      description:
        'The header the trusted proxies write: x-forwarded-for, forwarded (RFC 7239), or auto (X-Forwarded-For when present, else Forwarded).',
    },
  ),
  DATA_DIR: Type.String({
    default: './data',
    description: 'Embedded database, operator token and local files.',
  }),
  CATALOG_FILE: Type.String({
    default: 'catalog.yaml',
    description: 'Providers, models and prices.',
  }),
  DEMO_MODEL: Type.Boolean({
    default: true,
    description:
      'Serve the built-in demo provider of the catalog (demo/echo in the default one); false leaves it and its models out.',
  }),
  DATABASE_URL: Type.String({
    default: '',
    description: 'PostgreSQL URL; empty means the embedded database under DATA_DIR.',
  }),
  DATABASE_POOL_SIZE: Type.Integer({ ...Positive, default: 10 }),
  REDIS_URL: Type.String({
    default: '',
    description:
      'Redis URL, or a cluster as redis+cluster://host:port,host:port; empty means the in-process admission store.',
  }),
  REDIS_KEY_PREFIX: Type.String({
    default: '',
    description: 'Prefix of every Redis key, to share one Redis between deployments.',
  }),
  ADMIN_TOKEN: Type.String({
    default: '',
    pattern: '^(|.{16,})$',
    hint: 'must be at least 16 characters',
    secret: true,
    description:
      'Operator API token, at least 16 characters (it can credit any account); empty means one is generated under DATA_DIR.',
  }),
  LOG_LEVEL: Type.Union(
    [Type.Literal('debug'), Type.Literal('info'), Type.Literal('warn'), Type.Literal('error')],
    { default: 'info' },
  ),
  WORKERS: Type.Integer({
    ...Positive,
    default: 1,
    description:
      'API server processes sharing the port (reusePort); needs REDIS_URL and DATABASE_URL when above 1.',
  }),
  MAX_CONCURRENT_REQUESTS: Type.Integer({
    ...Positive,
    default: 4096,
    description: 'Gateway ceiling per process; above it requests get 503 overloaded.',
  }),
  ADMISSION_TIMEOUT_MS: Type.Integer({
    ...Positive,
    default: 300,
    description: 'Bound on one admission-store call before 502 admission_unconfirmed.',
  }),
  HOLD_DEADLINE_MS: Type.Integer({
    minimum: 100,
    default: 1_200_000,
    description:
      'How long a hold stays open unless its request settles or extends it (spec: a hold after admission_unconfirmed releases within 20 minutes). Running requests extend theirs after a quarter of it.',
  }),
  ADMISSION_LEASE_MS: Type.Integer({
    minimum: 0,
    default: 20,
    description:
      'With Redis: how often this process sends the charges of its admission leases and resizes them (0: no leases; every request is one Redis call to admit and one to settle).',
  }),
  ADMISSION_LEASE_TTL_MS: Type.Integer({
    ...Positive,
    default: 30_000,
    description:
      'A lease its process stopped renewing expires after this long; what it held returns to the account.',
  }),
  UPSTREAM_TIMEOUT_MS: Type.Integer({
    ...Positive,
    default: 110_000,
    description: 'Time for a complete non-streaming answer (spec: 110 s).',
  }),
  IMAGE_COST_DEADLINE_MS: Type.Integer({
    ...Positive,
    default: 3_600_000,
    description:
      'How long an image hold stays open when the outcome is unknown (timeout, lost connection); then it is released.',
  }),
  STREAM_FIRST_BYTE_TIMEOUT_MS: Type.Integer({ ...Positive, default: 110_000 }),
  STREAM_IDLE_TIMEOUT_MS: Type.Integer({ ...Positive, default: 60_000 }),
  UPSTREAM_ATTEMPT_FIRST_BYTE_MS: Type.Integer({
    ...Positive,
    default: 45_000,
    description:
      'Streaming: wait for one upstream attempt to start before trying the next route (when one is left).',
  }),
  BREAKER_FAILURES: Type.Integer({
    ...Positive,
    default: 5,
    description: "Consecutive failed attempts that open a route's circuit breaker.",
  }),
  BREAKER_OPEN_MS: Type.Integer({
    ...Positive,
    default: 30_000,
    description: 'How long an open breaker skips its route before one probe may try it.',
  }),
  PAUSE_REFRESH_MS: Type.Integer({
    ...Positive,
    default: 5_000,
    description: 'Interval of reading operator provider pauses from the database.',
  }),
  FREE_REQUESTS_PER_DAY: Type.Integer({
    minimum: 0,
    default: 200,
    description: 'Requests on free models per account and UTC day, shared by its keys.',
  }),
  KEY_CACHE_TTL_MS: Type.Integer({
    ...Positive,
    default: 60_000,
    description: 'Longest a cached key record is trusted without invalidation.',
  }),
  LEDGER_FLUSH_MS: Type.Integer({
    ...Positive,
    default: 50,
    description: 'Interval of batched ledger and request-log writes.',
  }),
  SWEEP_INTERVAL_MS: Type.Integer({
    ...Positive,
    default: 30_000,
    description: 'Interval of the expired-hold sweep.',
  }),
  ACCOUNT_RPM_LIMIT: Type.Integer({
    minimum: 0,
    default: 6_000,
    description: 'Default account requests per minute (0: no limit).',
  }),
  ACCOUNT_TPM_LIMIT: Type.Integer({
    minimum: 0,
    default: 20_000_000,
    description: 'Default account tokens per minute (0: no limit).',
  }),
  ACCOUNT_CONCURRENCY_LIMIT: Type.Integer({
    minimum: 0,
    default: 256,
    description: 'Default account concurrent requests (0: no limit).',
  }),
  INVALID_KEYS_PER_MINUTE: Type.Integer({
    ...Positive,
    default: 30,
    description: 'Requests with an invalid key allowed per client address and minute; then 429.',
  }),
  CATALOG_READS_PER_MINUTE: Type.Integer({
    ...Positive,
    default: 120,
    description: 'Catalog reads allowed per client address and minute.',
  }),
  STRIPE_SECRET_KEY: Type.String({
    default: '',
    description:
      'Card top-ups through Stripe Checkout (with STRIPE_WEBHOOK_SECRET); empty: no card payments.',
  }),
  STRIPE_WEBHOOK_SECRET: Type.String({
    default: '',
    description: 'Signing secret of the Stripe webhook endpoint, POST {site}/webhooks/stripe.',
  }),
  STRIPE_API_URL: Type.String({
    default: '',
    description: "Another address for Stripe's API (a local stand-in); empty: Stripe's own.",
  }),
  DEPOSIT_XPUB: Type.String({
    default: '',
    description:
      "Stablecoin deposits: the operator's extended public key (xpub) each account's deposit address is derived from; empty: no deposits.",
  }),
  DEPOSIT_CHAIN_ID: Type.Integer({
    ...Positive,
    default: 1,
    description: 'EVM chain of deposits.',
  }),
  DEPOSIT_TOKENS: Type.String({
    default: '',
    description: 'Accepted tokens, comma-separated SYMBOL:contract:decimals (USDC:0xA0b8…eB48:6).',
  }),
  DEPOSIT_CONFIRMATIONS: Type.Integer({
    ...Positive,
    default: 12,
    description: 'Blocks on top of a deposit before it is credited.',
  }),
  DEPOSIT_RPC_URL: Type.String({
    default: '',
    description:
      "JSON-RPC endpoint of the deposits' chain; with it the gateway watches token transfers to deposit addresses and credits them. Empty: the operator credits deposits by hand.",
  }),
  DEPOSIT_POLL_MS: Type.Integer({
    ...Positive,
    default: 5_000,
    description: 'How often the deposit watcher reads new blocks.',
  }),
  SANCTIONS_LIST_FILE: Type.String({
    default: '',
    description:
      'Wallet addresses to screen (one a line, # comments), read again when the file changes; a listed wallet suspends its accounts. Empty: no screening.',
  }),
  TOPUP_MIN_USD: Type.String({ ...Usd, default: '5', description: 'Smallest card top-up.' }),
  TOPUP_MAX_USD: Type.String({ ...Usd, default: '10000', description: 'Largest card top-up.' }),
  SMTP_URL: Type.String({
    default: '',
    description:
      'SMTP server for sign-in links and alerts (smtp://user:pass@host:587); empty: mail goes to DATA_DIR/outbox.jsonl.',
  }),
  ALERT_RETRY_BASE_MS: Type.Integer({
    ...Positive,
    default: 30_000,
    description:
      'Pause before a failed credit-alert delivery is tried again; doubled each time, at most an hour.',
  }),
  ALERT_MAX_ATTEMPTS: Type.Integer({
    ...Positive,
    default: 8,
    description:
      'Attempts of a credit-alert delivery before it is marked failed (shown in the dashboard).',
  }),
  ALERT_DELIVERY_INTERVAL_MS: Type.Integer({
    ...Positive,
    default: 10_000,
    description: 'How often the servers look for credit-alert deliveries due to be tried again.',
  }),
  MAIL_FROM: Type.String({
    default: 'Model Gateway <no-reply@localhost>',
    description: 'Sender of outgoing mail.',
  }),
  SESSION_TTL_MS: Type.Integer({
    ...Positive,
    default: 30 * 86_400_000,
    description: 'Lifetime of a dashboard session cookie.',
  }),
  DASHBOARD_ORIGINS: Type.String({
    default: '',
    description:
      'Other origins (comma-separated) the dashboard may be served from; CORS and write checks allow them.',
  }),
  KEY_DAILY_LIMIT_USD: Type.String({
    ...Usd,
    default: '50',
    description: 'Default daily spend cap of a new key (0: none).',
  }),
  KEY_MONTHLY_LIMIT_USD: Type.String({
    ...Usd,
    default: '500',
    description: 'Default monthly spend cap of a new key (0: none).',
  }),
  ACCOUNTLESS_KEY_DAILY_LIMIT_USD: Type.String({
    ...Usd,
    default: '10',
    description:
      'Default daily spend cap of a new key of an accountless account (no identity, no recovery).',
  }),
  ACCOUNTLESS_KEY_MONTHLY_LIMIT_USD: Type.String({
    ...Usd,
    default: '100',
    description: 'Default monthly spend cap of a new key of an accountless account.',
  }),
  ALTCHA_HMAC_KEY: Type.String({
    default: '',
    description:
      'Secret signing the bot-check challenges of accountless setup; empty means one is generated under DATA_DIR (set it when several hosts serve the site).',
  }),
  ALTCHA_CHALLENGE_TTL_MS: Type.Integer({
    ...Positive,
    default: 600_000,
    description:
      'How long a bot-check challenge may be solved and used; a used one is remembered this long.',
  }),
  ALTCHA_COST: Type.Integer({
    ...Positive,
    default: 1_000,
    description: 'PBKDF2 iterations per bot-check attempt (work per guess).',
  }),
  ALTCHA_MAX_COUNTER: Type.Integer({
    minimum: 2,
    default: 5_000,
    description:
      'Upper bound of the bot-check answer (guesses needed: between half of it and all of it).',
  }),
  MAGIC_LINK_TTL_MS: Type.Integer({
    ...Positive,
    default: 900_000,
    description: 'Lifetime of an e-mailed sign-in, claim or team-invite link (single use).',
  }),
  SIWE_CHAIN_ID: Type.Integer({
    ...Positive,
    default: 1,
    description: 'Chain ID a Sign-In with Ethereum message must name.',
  }),
  WALLET_NONCE_TTL_MS: Type.Integer({
    ...Positive,
    default: 600_000,
    description: 'Lifetime of a Sign-In with Ethereum nonce (single use).',
  }),
  ACCOUNTLESS_SETUPS_PER_ADDRESS_PER_DAY: Type.Integer({
    ...Positive,
    default: 5,
    description:
      'Accountless accounts one client address may create in a day (each after a solved bot check); then 429.',
  }),
  RESPONSES_RETENTION_DAYS: Type.Integer({
    minimum: 0,
    maximum: 3650,
    default: 30,
    description:
      'Days a Responses answer is kept for previous_response_id and GET /v1/responses/:id (unless the request says store: false), and a Messages thread for its next continue; 0: none is kept.',
  }),
  RESPONSES_FOLLOW_UP_WAIT_MS: Type.Integer({
    minimum: 0,
    default: 2000,
    description:
      "How long a follow-up looks for a previous response (or a thread's reply) that another process may still be writing before it is refused.",
  }),
  SIGN_IN_ATTEMPTS_PER_MINUTE: Type.Integer({
    ...Positive,
    default: 10,
    description:
      'Per client address and minute: wrong dashboard links, sign-in and claim mails, wallet nonces and sign-ins; then 429.',
  }),
  MAILS_PER_RECIPIENT_PER_MINUTE: Type.Integer({
    ...Positive,
    default: 3,
    description: 'Sign-in, claim and invite mails to one e-mail address per minute; then 429.',
  }),
  FREE_CHAT_MESSAGES: Type.Integer({
    minimum: 0,
    default: 10,
    description:
      'Free chat messages per account in the dashboard playground (the trial); then 402 trial_exhausted.',
  }),
  FREE_CHAT_MODEL: Type.String({
    minLength: 1,
    default: 'service/auto:free',
    description:
      'What free playground chat uses: a free automatic choice or a free model of the catalog (never a paid one).',
  }),
  VAPID_PUBLIC_KEY: Type.String({
    default: '',
    description:
      'Browser-push (VAPID) public key, base64url; empty (with VAPID_PRIVATE_KEY) means a pair is generated under DATA_DIR.',
  }),
  VAPID_PRIVATE_KEY: Type.String({
    default: '',
    description:
      'Browser-push (VAPID) private key, base64url; set with VAPID_PUBLIC_KEY when several hosts send alerts.',
  }),
  VAPID_SUBJECT: Type.String({
    default: '',
    description:
      'Contact for push services (mailto: or https:); empty: PUBLIC_SITE_URL when https, else the MAIL_FROM address.',
  }),
  PUSH_ALLOW_PRIVATE_ENDPOINTS: Type.Boolean({
    default: false,
    description:
      'Accept http and private-address push endpoints (local testing only; browsers always give public https ones).',
  }),
  METRICS_TOKEN: Type.String({
    default: '',
    description: 'Bearer token required by GET /metrics; empty means open.',
  }),
  SHUTDOWN_DRAIN_MS: Type.Integer({
    minimum: 0,
    default: 30_000,
    description: 'On SIGTERM, how long open requests may finish before they are cut.',
  }),
})

export type Config = Static<typeof ConfigSchema> & {
  trustedProxies: Networks
  keyDailyLimitNano: number
  keyMonthlyLimitNano: number
  accountlessKeyDailyLimitNano: number
  accountlessKeyMonthlyLimitNano: number
}

export class ConfigError extends Error {}

/** Reads the settings from an environment, applying defaults; throws a ConfigError naming each bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, unknown> = {}
  for (const name of Object.keys(ConfigSchema.properties)) {
    const value = env[name]
    if (value !== undefined && value !== '') raw[name] = value
  }
  // Conversion would read "1.5" or "1e3" as 1: a whole-number setting must be written as one.
  const notWhole = Object.entries(raw).filter(
    ([name, value]) =>
      (ConfigSchema.properties as Record<string, { type?: string }>)[name]?.type === 'integer' &&
      !/^-?\d+$/.test(String(value).trim()),
  )
  for (const [name] of notWhole) delete raw[name]
  const converted = Value.Convert(ConfigSchema, Value.Default(ConfigSchema, raw))
  const problems = notWhole.map(
    ([name, value]) => `${name}: must be a whole number (got ${JSON.stringify(value)})`,
  )
  problems.push(
    ...[...Value.Errors(ConfigSchema, converted)].map((error) => {
      const name = error.path.slice(1)
      const problem = `${name || 'config'}: ${describe(error.schema, error.message)}`
      // A secret is never echoed into the log that shows the refusal.
      return (error.schema as { secret?: boolean }).secret
        ? problem
        : `${problem} (got ${JSON.stringify(raw[name] ?? null)})`
    }),
  )
  const config = converted as Static<typeof ConfigSchema>
  const trusted = parseNetworks(config.TRUSTED_PROXIES ?? '')
  problems.push(...trusted.problems.map((problem) => `TRUSTED_PROXIES: ${problem}`))
  if (problems.length === 0) problems.push(...conflicts(config))
  if (problems.length > 0)
    throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`)
  return {
    ...config,
    trustedProxies: trusted.networks,
    keyDailyLimitNano: usdToNano(config.KEY_DAILY_LIMIT_USD)!,
    keyMonthlyLimitNano: usdToNano(config.KEY_MONTHLY_LIMIT_USD)!,
    accountlessKeyDailyLimitNano: usdToNano(config.ACCOUNTLESS_KEY_DAILY_LIMIT_USD)!,
    accountlessKeyMonthlyLimitNano: usdToNano(config.ACCOUNTLESS_KEY_MONTHLY_LIMIT_USD)!,
  }
}

function describe(schema: unknown, fallback: string): string {
  if ((schema as { pattern?: string }).pattern === USD_AMOUNT_PATTERN)
    return 'must be an amount in USD, in digits with at most 9 decimals, such as 5 or 0.25'
  const hint = (schema as { hint?: string }).hint
  if (hint) return hint
  const options = (schema as { anyOf?: { const?: unknown }[] }).anyOf
  if (!options) return fallback
  return `expected one of ${options.map((option) => option.const).join(', ')}`
}
