/** What the admin API needs: the operator services (database, live store, key cache, catalog), the settings and a clock. */
import type { OperatorDeps } from '../../accounts/operator-deps.ts'
import type { Config } from '../../core/config.ts'
import type { AddressLimiter } from '../../stores/address-limits.ts'
import type { Mailer } from '../../accounts/people/mailer.ts'
import type { CreditAlerts } from '../../accounts/alerts/credit-alerts.ts'
import type { CardPayments } from '../../accounts/payments/stripe.ts'
import type { SanctionsList } from '../../accounts/payments/sanctions.ts'
import type { Deposits } from '../../accounts/payments/deposits.ts'
import type { PlaygroundDeps } from '../../accounts/playground/playground.ts'

export type AdminDeps = OperatorDeps & {
  config: Config
  /** The port the API server listens on: the one it bound (`PORT=0` picks one), `PORT` until it listens. */
  apiPort: () => number
  mailer: Mailer
  /** Per-address limits of sign-in attempts and mails (the same limiter as the catalog's and invalid keys'). */
  limiter: AddressLimiter
  /** The HMAC key signing bot-check challenges (see accounts/people/altcha-key.ts). */
  altchaKey: string
  /** The gateway (run in process for the playground's chat), its free chat lock and trial settings. */
  playground: PlaygroundDeps
  /** Credit alerts: the VAPID public key browsers subscribe with. */
  alerts: CreditAlerts
  /** Card top-ups through Stripe; undefined when they are not configured. */
  cards?: CardPayments
  /** Stablecoin deposit addresses; undefined without DEPOSIT_XPUB. */
  deposits?: Deposits
  /** Wallet addresses screened at sign-in (and deposits); undefined without SANCTIONS_LIST_FILE. */
  sanctions?: SanctionsList
}
