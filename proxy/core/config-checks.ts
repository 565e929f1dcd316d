/**
 * The checks of settings that are each valid alone but do not work together, and of URL settings of the
 * wrong kind: run by `loadConfig` once every setting passed its own check, so a start either runs as
 * configured or stops naming each setting.
 */
import { NANO_PER_USD, usdToNano } from '../../shared/money.ts'

/** The settings these checks read, as `loadConfig` has them. */
type UrlSetting =
  | 'DATABASE_URL'
  | 'REDIS_URL'
  | 'SMTP_URL'
  | 'PUBLIC_API_URL'
  | 'PUBLIC_SITE_URL'
  | 'STRIPE_API_URL'
  | 'DEPOSIT_RPC_URL'
type Settings = Record<
  | UrlSetting
  | 'HOST'
  | 'DASHBOARD_ORIGINS'
  | 'STRIPE_SECRET_KEY'
  | 'STRIPE_WEBHOOK_SECRET'
  | 'TOPUP_MIN_USD'
  | 'TOPUP_MAX_USD',
  string
> &
  Record<'PORT' | 'SITE_PORT' | 'IMAGE_COST_DEADLINE_MS' | 'UPSTREAM_TIMEOUT_MS', number>

/** URL settings and the schemes each accepts (a value is never echoed: it may hold a password). */
const URL_SCHEMES: [UrlSetting, string[], string][] = [
  ['DATABASE_URL', ['postgres', 'postgresql'], 'postgres://user:password@host:5432/database'],
  ['REDIS_URL', ['redis', 'rediss', 'redis+cluster', 'rediss+cluster'], 'redis://host:6379'],
  ['SMTP_URL', ['smtp', 'smtps'], 'smtp://user:password@host:587'],
  ['PUBLIC_API_URL', ['http', 'https'], 'https://api.example.com'],
  ['PUBLIC_SITE_URL', ['http', 'https'], 'https://example.com'],
  ['STRIPE_API_URL', ['http', 'https'], 'http://127.0.0.1:12111'],
  ['DEPOSIT_RPC_URL', ['http', 'https'], 'https://rpc.example.com'],
]

/** Settings each valid alone that do not work together, or a URL of the wrong kind. */
export function conflicts(config: Settings): string[] {
  const problems: string[] = []
  for (const [name, schemes, example] of URL_SCHEMES) {
    const value = config[name]
    const scheme = /^([a-z][a-z0-9+.-]*):\/\/[^/?#\s]/i.exec(value)?.[1]?.toLowerCase()
    if (value && !(scheme && schemes.includes(scheme)))
      problems.push(
        `${name}: not a ${schemes.map((s) => `${s}://`).join(' or ')} URL (such as ${example})`,
      )
  }
  // Without PUBLIC_SITE_URL, the site's address is the one each request names in its Host header, which
  // anyone can write: served to other machines, a stranger could have sign-in links mailed to someone
  // that lead to their own host, or have a wallet signature for their site accepted.
  if (!config.PUBLIC_SITE_URL && !isLoopbackHost(config.HOST))
    problems.push(
      `PUBLIC_SITE_URL and HOST: serving other machines (HOST ${config.HOST}) needs the site's public address in PUBLIC_SITE_URL (such as https://example.com); mailed sign-in links and wallet sign-in name it, never the address a request claims`,
    )
  if (config.PORT !== 0 && config.PORT === config.SITE_PORT)
    problems.push(
      `PORT and SITE_PORT: both are ${config.PORT}; the API server and the site server each need their own port`,
    )
  if (Boolean(config.STRIPE_SECRET_KEY) !== Boolean(config.STRIPE_WEBHOOK_SECRET))
    problems.push(
      `${config.STRIPE_SECRET_KEY ? 'STRIPE_WEBHOOK_SECRET' : 'STRIPE_SECRET_KEY'}: card top-ups need both STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET (or neither, for no card payments)`,
    )
  if (config.IMAGE_COST_DEADLINE_MS <= config.UPSTREAM_TIMEOUT_MS)
    problems.push(
      `IMAGE_COST_DEADLINE_MS and UPSTREAM_TIMEOUT_MS: an image request's hold (${config.IMAGE_COST_DEADLINE_MS} ms) must outlast the request itself (${config.UPSTREAM_TIMEOUT_MS} ms), or it is released while the provider may still bill it`,
    )
  // A browser's Origin header is scheme, host and port alone: an entry written otherwise (a trailing
  // slash, a path, no scheme) would never match, and the dashboard served there could write nothing.
  for (const entry of config.DASHBOARD_ORIGINS.split(',')
    .map((origin) => origin.trim())
    .filter(Boolean)) {
    const origin = URL.canParse(entry) ? new URL(entry).origin : 'null'
    if (origin !== entry)
      problems.push(
        `DASHBOARD_ORIGINS: ${JSON.stringify(entry)} is not an origin (scheme, host and port only, such as https://dash.example.com)${origin === 'null' ? '' : `; write ${origin}`}`,
      )
  }
  // A card charges whole cents, and a top-up of nothing is no top-up.
  const NANO_PER_CENT = NANO_PER_USD / 100
  for (const name of ['TOPUP_MIN_USD', 'TOPUP_MAX_USD'] as const) {
    const nano = usdToNano(config[name])!
    if (nano === 0 || nano % NANO_PER_CENT !== 0)
      problems.push(
        `${name}: must be a whole number of cents above 0, such as 5 or 0.50 (got ${JSON.stringify(config[name])})`,
      )
  }
  if (usdToNano(config.TOPUP_MIN_USD)! > usdToNano(config.TOPUP_MAX_USD)!)
    problems.push(
      `TOPUP_MIN_USD and TOPUP_MAX_USD: the smallest top-up (${config.TOPUP_MIN_USD}) is above the largest (${config.TOPUP_MAX_USD})`,
    )
  return problems
}

/** A HOST only this machine reaches: a loopback address or `localhost`. */
function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase().replace(/^\[|\]$/g, '')
  return (
    name === 'localhost' ||
    name.endsWith('.localhost') ||
    name === '::1' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name)
  )
}
