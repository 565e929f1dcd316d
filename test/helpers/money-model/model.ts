/**
 * A small model of the money rules, written from the spec (and, where the spec leaves a number open, from
 * DESIGN.md and docs/decisions.md), never from the gateway's code: the model-based money test
 * (test/faults/money-model.test.ts) runs it beside the real gateway and compares them after every step.
 *
 * Rules it reads:
 * - A request passes its stages in order: body (400), key (401, 403 `account_suspended`), model (404,
 *   403 `model_not_allowed`), then one admission that checks rate and concurrency limits (429), spend caps
 *   counting open holds (403 `spend_limit_exceeded`) and the available balance against the hold (402).
 *   The spec does not order the admission checks among themselves, so any one that applies is accepted.
 * - The hold is the worst case over the candidates: input at most the body's bytes plus 8 a message
 *   (capped at the context), output at the requested limit or the model's maximum.
 * - A charge is the provider's usage at the catalog price, rounded up to the nano, and never above the
 *   hold (the rest is written off). A failure before any output charges nothing. A stream the provider
 *   breaks is charged for what was delivered, written off entirely under 50 output tokens; a client that
 *   leaves pays for what it was sent; a stream whose next delta would cost more than the hold stops
 *   there. Input the provider has not reported is the usual-size estimate (bytes ÷ 4 plus 8 a message).
 * - Rate limits count admitted requests and their tokens (the estimate while open, the actual count
 *   after); how a minute is cut is the product's choice, so a rate decision is certain only when the
 *   last two minutes fit the limit, or the last two seconds alone exceed it.
 * - Spend caps are per UTC day and month; a charge counts in the day it settles. Rotation: the old key
 *   works until 24 hours after, the new one has the old one's settings; revocation stops a key at once.
 */
import { holdOf, tokenEstimateOf, type Ask, type ModelSpec, type Outcome } from './charges.ts'

export type Limits = { rpm: number | null; tpm: number | null; concurrency: number | null }

export type KeyLimits = Limits & {
  dailyNano: number | null
  monthlyNano: number | null
  allowedModels: string[] | null
}

export type KeyModel = {
  id: string
  /**
   * The first key of its rotation lineage: a rotated key counts in its lineage's rate and spend windows
   * (its `held`, `inFlight` and `charges` are the lineage's, shared by every key of it).
   */
  lineageId: string
  accountId: string
  secret: string
  revoked: boolean
  /** End of a rotation's grace on the gateway's clock, or null for a key never rotated. */
  expiresAt: number | null
  limits: KeyLimits
  held: number
  inFlight: number
  /** Charges and when they settled, on the admission store's clock. */
  charges: { at: number; nano: number }[]
}

export type AccountModel = {
  id: string
  balance: number
  held: number
  inFlight: number
  suspended: boolean
  /** null: the service's default, which the test sets to no limit. */
  limits: Limits
}

/** A request counted in the rate windows. */
/** `keyId`: the key's rotation lineage, whose windows it counts in. */
type Counted = { at: number; accountId: string; keyId: string; tokens: number }

/** An admitted request the model holds money for. */
export type Admitted = {
  accountId: string
  keyId: string
  holdNano: number
  counted: Counted
}

export type Decision = {
  /** The codes the gateway may refuse with (one of them, certainly, when `certain` is set). */
  codes: string[]
  /** True: a refusal is certain; false: the request may also be admitted. */
  certain: boolean
  /** The account whose balance the answer reports: the key's, when the key works. */
  accountId?: string
  /** Whether the gateway logs the request (its key was accepted). */
  logged: boolean
  /** What admission holds, if it admits. */
  admission?: {
    key: KeyModel
    account: AccountModel
    holdNano: number
    tokens: number
    candidates: ModelSpec[]
  }
}

const DAY_MS = 86_400_000
const dayOf = (ms: number) => Math.floor(ms / DAY_MS)
const monthOf = (ms: number) => {
  const date = new Date(ms)
  return date.getUTCFullYear() * 12 + date.getUTCMonth()
}

export class MoneyModel {
  readonly accounts = new Map<string, AccountModel>()
  readonly keys = new Map<string, KeyModel>()
  private counted: Counted[] = []

  constructor(
    readonly catalog: Map<string, ModelSpec>,
    /** The gateway's clock (key expiry). */
    readonly authNow: () => number,
    /** The admission store's clock (rate windows, days and months of spend). */
    readonly admissionNow: () => number,
  ) {}

  keyBySecret(secret: string | undefined): KeyModel | undefined {
    return [...this.keys.values()].find((key) => key.secret === secret)
  }

  /**
   * The operator changed a key's limits. Rate limits and spend caps are its rotation lineage's: the
   * lineage's other usable keys get the changed ones too; the model list stays the key's own.
   */
  changeLimits(key: KeyModel, limits: KeyLimits): void {
    const shared = (['rpm', 'tpm', 'concurrency', 'dailyNano', 'monthlyNano'] as const).filter(
      (field) => limits[field] !== key.limits[field],
    )
    for (const other of this.keys.values())
      if (other !== key && other.lineageId === key.lineageId && this.usable(other))
        for (const field of shared) other.limits[field] = limits[field]
    key.limits = limits
  }

  usable(key: KeyModel): boolean {
    return !key.revoked && (key.expiresAt === null || this.authNow() < key.expiresAt)
  }

  available(account: AccountModel): number {
    return account.balance - account.held
  }

  daySpent(key: KeyModel): number {
    const today = dayOf(this.admissionNow())
    return key.charges.filter((c) => dayOf(c.at) === today).reduce((sum, c) => sum + c.nano, 0)
  }

  monthSpent(key: KeyModel): number {
    const month = monthOf(this.admissionNow())
    return key.charges.filter((c) => monthOf(c.at) === month).reduce((sum, c) => sum + c.nano, 0)
  }

  /** What the gateway must answer to a request with this key. */
  decide(ask: Ask, secret: string | undefined): Decision {
    const key = this.keyBySecret(secret)
    const known = key && this.usable(key) ? key : undefined
    const account = known && this.accounts.get(known.accountId)!
    // Every answer carries the balance of the account the key names (spec: on every response).
    const refuse = (code: string, logged: boolean): Decision => ({
      codes: [code],
      certain: true,
      accountId: account?.id,
      logged,
    })
    // The key's refusal comes before the body's (spec: a missing or unknown key is 401).
    if (!known || !account) return refuse('invalid_api_key', false)
    if (account.suspended) return refuse('account_suspended', true)
    if (!ask.valid) return refuse('invalid_request', true)
    const candidates = ask.models.map((id) => this.catalog.get(id))
    if (candidates.some((model) => !model)) return refuse('unknown_model', true)
    const allowed = known.limits.allowedModels
    if (allowed && !ask.models.every((id) => allowed.includes(id)))
      return refuse('model_not_allowed', true)

    const models = candidates as ModelSpec[]
    const holdNano = holdOf(ask, models)
    const tokens = tokenEstimateOf(ask, models)
    const now = this.admissionNow()
    const certain: string[] = []
    const doubtful: string[] = []
    const rate = (
      limit: number | null,
      cost: number,
      counted: Counted[],
      by: (c: Counted) => number,
    ) => {
      const verdict = rateVerdict(limit, cost, counted, by, now)
      if (verdict === 'refuse') certain.push('usage_limit_exceeded')
      if (verdict === 'doubt') doubtful.push('usage_limit_exceeded')
    }
    const ofKey = this.counted.filter((c) => c.keyId === known.lineageId)
    const ofAccount = this.counted.filter((c) => c.accountId === account.id)
    const { limits } = known
    if (limits.concurrency && known.inFlight >= limits.concurrency)
      certain.push('usage_limit_exceeded')
    if (account.limits.concurrency && account.inFlight >= account.limits.concurrency)
      certain.push('usage_limit_exceeded')
    rate(limits.rpm, 1, ofKey, () => 1)
    rate(limits.tpm, tokens, ofKey, (c) => c.tokens)
    rate(account.limits.rpm, 1, ofAccount, () => 1)
    rate(account.limits.tpm, tokens, ofAccount, (c) => c.tokens)
    if (
      limits.dailyNano !== null &&
      this.daySpent(known) + known.held + holdNano > limits.dailyNano
    )
      certain.push('spend_limit_exceeded')
    if (
      limits.monthlyNano !== null &&
      this.monthSpent(known) + known.held + holdNano > limits.monthlyNano
    )
      certain.push('spend_limit_exceeded')
    if (this.available(account) < holdNano) certain.push('insufficient_credits')
    return {
      codes: [...new Set([...certain, ...doubtful])],
      certain: certain.length > 0,
      accountId: account.id,
      logged: true,
      admission:
        certain.length > 0
          ? undefined
          : { key: known, account, holdNano, tokens, candidates: models },
    }
  }

  /** Places the hold of an admitted request. */
  admit(admission: NonNullable<Decision['admission']>): Admitted {
    const { key, account, holdNano, tokens } = admission
    account.held += holdNano
    account.inFlight += 1
    key.held += holdNano
    key.inFlight += 1
    const counted = { at: this.admissionNow(), accountId: account.id, keyId: key.lineageId, tokens }
    this.counted.push(counted)
    return { accountId: account.id, keyId: key.id, holdNano, counted }
  }

  /** Ends the hold: the charge leaves the balance and counts in the key's spend of the day and month. */
  settle(admitted: Admitted, outcome: Outcome): void {
    const account = this.accounts.get(admitted.accountId)!
    const key = this.keys.get(admitted.keyId)!
    account.held -= admitted.holdNano
    account.inFlight -= 1
    key.held -= admitted.holdNano
    key.inFlight -= 1
    account.balance -= outcome.chargedNano
    if (outcome.chargedNano > 0)
      key.charges.push({ at: this.admissionNow(), nano: outcome.chargedNano })
    admitted.counted.tokens = outcome.tokens
  }

  credit(accountId: string, nano: number): void {
    this.accounts.get(accountId)!.balance += nano
  }
}

/**
 * A rate limit's decision, when certain: the gateway counts ten-second buckets reaching 60 to 70 seconds
 * back, so what is more than 72 seconds old never counts, and what the last 58 seconds hold always does
 * (two seconds either side for the clocks of the test and the store).
 */
function rateVerdict(
  limit: number | null,
  cost: number,
  counted: Counted[],
  by: (c: Counted) => number,
  now: number,
): 'pass' | 'refuse' | 'doubt' {
  if (!limit) return 'pass'
  const sum = (since: number) =>
    counted.filter((c) => c.at > now - since && c.at <= now).reduce((total, c) => total + by(c), 0)
  if (sum(72_000) + cost <= limit) return 'pass'
  if (sum(58_000) + cost > limit) return 'refuse'
  return 'doubt'
}
