/**
 * Model-based money test. A seeded random sequence of operations runs against the real gateway and, step
 * by step, against a small model of the spec's money rules (test/helpers/money-model/model.ts and
 * charges.ts); after every step the two must agree (test/helpers/money-model/referee.ts): the answer's
 * status and error code, the cost and balance it reports, how a stream ends, and the operator API's
 * account view (balance, ledger balance, holds, requests in flight, each key's spend and holds). At the
 * end the ledger sums to the balance, no balance is negative, the ledger has exactly the rows the model
 * expects, and every request answered with 200 is in the request log once.
 *
 * Operations: requests in the three client styles, streamed or not, with fallbacks, that succeed, fail
 * upstream before any output, are broken by the provider mid-stream (either side of the 50-token
 * write-off), stop at their hold, are left by their client mid-stream or while the provider stalls, or
 * are refused (400, 401, 402 at exactly one nano short of the hold, 403, 404, 429); credits, key creation,
 * rotation and revocation, key limits (rpm, tpm, concurrency, daily and monthly caps, models), account
 * limits, suspension, and moves of the clock. The only stand-in is the provider (the fake upstream).
 *
 * Time: the gateway's clock (key expiry) is frozen and moved by the test on every setup. The in-process
 * admission store reads the same clock, so on the memory setups a move also moves rate windows and the
 * UTC days and months of spend caps. Redis takes its time from Redis (TIME), which a test cannot move: on
 * the Redis setup a move only moves key expiry, the model reads rate and spend windows on the real time,
 * and a run across UTC midnight could see a charge land in the other day. The maintenance job (sweeps of
 * expired holds) does not run, so a moved clock expires no hold.
 *
 * Left out, as not money rules: the breakers and the per-address invalid-key limit (set out of reach),
 * guardrails, presets, `service/auto`, images, the free allowance, and the context check (needs the
 * tokenizer's count).
 *
 * A failure names the seed, the step and its operation; run it again with MONEY_MODEL_SEED=<seed>.
 * MONEY_MODEL_STEPS sets the number of steps (400), MONEY_MODEL_TALLY=1 prints how the requests ended.
 */
import { afterAll, beforeAll, test } from 'bun:test'
import { callApi, leave, operator } from '../helpers/money-model/client.ts'
import {
  answeringModels,
  bigModels,
  catalogModels,
  plainModels,
  specById,
} from '../helpers/money-model/catalog.ts'
import { holdOf, leftOpen, type Style } from '../helpers/money-model/charges.ts'
import type { KeyLimits, KeyModel } from '../helpers/money-model/model.ts'
import { Referee, statusOf } from '../helpers/money-model/referee.ts'
import { buildRequest, withOutputLimit } from '../helpers/money-model/requests.ts'
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts'
import { prng, seedFrom, type Prng } from '../helpers/prng.ts'
import { describeWith } from '../helpers/services.ts'
import { storeSetups } from '../helpers/setups.ts'

const seed = seedFrom('MONEY_MODEL_SEED')
const STEPS = Number(process.env.MONEY_MODEL_STEPS || 400)

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR
const GRACE_MS = 24 * HOUR

/** One run: the random steps, each checked by the referee. */
class Run extends Referee {
  readonly rng: Prng = prng(seed)

  constructor(gw: TestGateway, store: 'memory' | 'redis', setup: string) {
    super(gw, store, setup, seed)
  }

  // -------------------------------------------------------------------------------------------------
  // Setup

  async start(): Promise<void> {
    for (const credit of [15_000_000, 3_000_000]) {
      const created = await operator<{ accountId: string }>(this.gw, 'POST', '/accounts', {
        creditNano: credit,
      })
      this.same(created.status, 201, 'account created')
      const id = created.body.accountId
      this.accounts.push(id)
      this.credits.set(id, [credit])
      this.model.accounts.set(id, {
        id,
        balance: credit,
        held: 0,
        inFlight: 0,
        suspended: false,
        limits: { rpm: null, tpm: null, concurrency: null },
      })
    }
    for (const accountId of [...this.accounts, ...this.accounts])
      await this.createKey(accountId, noLimits())
    await this.compare()
  }

  async createKey(accountId: string, limits: KeyLimits): Promise<void> {
    const created = await operator<{ id: string; key: string }>(this.gw, 'POST', '/keys', {
      accountId,
      rpmLimit: limits.rpm,
      tpmLimit: limits.tpm,
      concurrency: limits.concurrency,
      dailyLimitNano: limits.dailyNano,
      monthlyLimitNano: limits.monthlyNano,
      allowedModels: limits.allowedModels,
    })
    this.same(created.status, 201, 'key created')
    this.model.keys.set(created.body.id, {
      id: created.body.id,
      lineageId: created.body.id,
      accountId,
      secret: created.body.key,
      revoked: false,
      expiresAt: null,
      limits,
      held: 0,
      inFlight: 0,
      charges: [],
    })
  }

  // -------------------------------------------------------------------------------------------------
  // Steps

  async run(steps: number): Promise<void> {
    try {
      await this.start()
      for (this.step = 1; this.step <= steps; this.step++) {
        const started = performance.now()
        this.operation = ''
        await this.randomStep()
        await this.compare()
        this.history.push(
          `${this.step}: ${this.operation} (${Math.round(performance.now() - started)} ms)`,
        )
        if (this.leased && this.step % 100 === 0) {
          // A lease idle for a second is given back, down to the holds of its open requests.
          this.operation = 'checkpoint: leases given back'
          await this.compare({ exact: true, timeoutMs: 6_000 })
        }
      }
      this.step = steps + 1
      this.operation = 'the end: open streams left'
      while (this.open.length > 0) await this.leaveOpen()
      await this.compare({ exact: true, timeoutMs: 6_000 })
      await this.finalChecks()
      if (process.env.MONEY_MODEL_TALLY) console.log(this.setup, this.tally())
    } finally {
      for (const open of this.open.splice(0)) await leave(open.stream).catch(() => undefined)
    }
  }

  async randomStep(): Promise<void> {
    const anySuspended = [...this.model.accounts.values()].some((account) => account.suspended)
    const step = this.rng.weighted<() => Promise<void>>([
      [() => this.plainRequest(), 52],
      [() => this.boundaryRequest(), 5],
      [() => this.burst(), 4],
      [() => this.openStall(), this.open.length < 3 ? 4 : 0],
      [() => this.leaveOpen(), this.open.length > 0 ? 5 : 0],
      [() => this.leaveSlow(), 4],
      [() => this.capBesideOpenHold(), this.open.length > 0 ? 4 : 0],
      [() => this.credit(), 6],
      [() => this.newKey(), 2],
      [() => this.rotate(), 3],
      [() => this.revoke(), 1.5],
      [() => this.keyLimits(), 7],
      [() => this.accountLimits(), 3],
      [() => this.suspension(), anySuspended ? 15 : 1],
      [() => this.moveClock(), 4],
    ])
    await step()
  }

  pickAccount(): string {
    return this.rng.chance(0.7) ? this.accounts[0]! : this.accounts[1]!
  }

  /** Mostly a usable key of the account; sometimes a revoked or expired one, an unknown one, or none. */
  pickSecret(accountId: string): string | undefined {
    const keys = this.keysOf(accountId)
    const usable = keys.filter((key) => this.model.usable(key))
    return this.rng.weighted<() => string | undefined>([
      [() => this.rng.pick(usable).secret, usable.length > 0 ? 85 : 0],
      [() => this.rng.pick(keys).secret, 7],
      [() => `svc-live-${base58(this.rng, 26)}`, 4],
      [() => undefined, 2],
      [() => 'sk-not-a-gateway-key', 2],
    ])()
  }

  outputLimit(style: Style): number | undefined {
    if (style !== 'messages' && this.rng.chance(0.25)) return undefined
    const limit = this.rng.weighted<() => number>([
      [() => this.rng.int(1, 40), 40],
      [() => this.rng.int(41, 400), 35],
      [() => this.rng.int(401, 1_000), 20],
      [() => this.rng.int(1_001, 3_000), 5],
    ])()
    return style === 'responses' ? Math.max(16, limit) : limit
  }

  /** A request of any style to any plain model (or one the catalog does not have). */
  async plainRequest(): Promise<void> {
    const accountId = this.pickAccount()
    const secret = this.pickSecret(accountId)
    const style = this.rng.pick<Style>(['chat', 'responses', 'messages'])
    const primary = this.rng.chance(0.04)
      ? this.rng.pick(['test/nothing', 'ok'])
      : this.rng.pick(plainModels)
    const key = this.model.keyBySecret(secret)
    const failing = ['o/fail', 'o/limited', 'a/fail'].includes(primary)
    const fallback =
      !key?.limits.allowedModels && primary.includes('/') && this.rng.chance(failing ? 0.5 : 0.1)
    const request = buildRequest(this.rng, {
      style,
      stream: this.rng.chance(0.5),
      models: fallback ? [primary, this.rng.pick(answeringModels)] : [primary],
      secret,
      outputLimit: this.outputLimit(style),
      invalid: this.rng.chance(0.03),
    })
    await this.send(request, 'whole')
  }

  /**
   * A request whose hold is exactly the available balance, or one nano above it: an output limit that
   * takes the hold to the balance, then a credit of the difference.
   */
  async boundaryRequest(accountId = this.pickAccount(), besides?: KeyModel): Promise<void> {
    const account = this.model.accounts.get(accountId)!
    const usable = this.keysOf(accountId).filter(
      (key) => this.model.usable(key) && !key.limits.allowedModels && key !== besides,
    )
    if (usable.length === 0 || account.suspended) return this.plainRequest()
    const style = this.rng.pick<Style>(['chat', 'responses', 'messages'])
    const model = this.rng.pick(bigModels)
    let request = buildRequest(this.rng, {
      style,
      stream: this.rng.chance(0.5),
      models: [model],
      secret: this.rng.pick(usable).secret,
      outputLimit: 16,
    })
    const spec = specById.get(model)!
    const holdOfRequest = () => holdOf(request.ask, [spec])
    // The hold grows by the output price per token; the body's bytes grow with the limit's digits.
    for (let round = 0; round < 4 && holdOfRequest() < this.model.available(account); round++) {
      const missing = this.model.available(account) - holdOfRequest()
      const limit = request.ask.outputLimit! + Math.ceil(missing / 2_000)
      if (limit > spec.maxOutputTokens) return this.plainRequest()
      request = withOutputLimit(request, limit)
    }
    const hold = holdOfRequest()
    const decision = this.model.decide(request.ask, request.secret)
    if (decision.codes.some((code) => code !== 'insufficient_credits'))
      return this.send(request, 'whole')
    const target = hold - (this.rng.chance(0.5) ? 1 : 0)
    const missing = target - this.model.available(account)
    if (missing > 0) await this.creditBy(accountId, missing)
    this.operation = `boundary: available ${this.model.available(account)}, hold ${hold}`
    await this.send(request, 'whole')
  }

  /**
   * Requests of one key in quick succession, with small holds on a balance that lets the key take an
   * admission lease (with Redis), then at once a step that meets the lease.
   */
  async burst(): Promise<void> {
    const accountId = this.accounts[0]!
    const account = this.model.accounts.get(accountId)!
    const usable = this.keysOf(accountId).filter((key) => this.model.usable(key))
    if (usable.length === 0 || account.suspended) return this.plainRequest()
    const key = this.rng.pick(usable)
    // A lease grows only while the balance keeps 16 times its growth (16 requests' holds) for others.
    const wanted = 300_000_000 - this.model.available(account)
    if (wanted > 0) await this.creditBy(accountId, wanted)
    const count = this.rng.int(6, 14)
    const then = this.rng.pick([
      () => this.capThenAsk(key),
      () => this.boundaryRequest(accountId, key),
    ])
    for (let request = 1; request <= count; request++) {
      this.operation = `burst ${request}/${count} of ${key.id}`
      const style = this.rng.pick<Style>(['chat', 'responses', 'messages'])
      await this.send(
        buildRequest(this.rng, {
          style,
          stream: this.rng.chance(0.3),
          models: [this.rng.pick(key.limits.allowedModels ?? ['o/ok', 'a/ok', 'o/odd'])],
          secret: key.secret,
          outputLimit: style === 'responses' ? this.rng.int(16, 60) : this.rng.int(1, 60),
        }),
        'whole',
      )
    }
    // At once, while the key's lease (if it took one) still holds room: a cap set under it, or a
    // request of another key for exactly what the account has available.
    this.operation = ''
    await then()
  }

  /** A stream whose provider stalls after its first event, kept open (its hold counts) until left. */
  async openStall(): Promise<void> {
    const accountId = this.pickAccount()
    const style = this.rng.pick<Style>(['chat', 'responses', 'messages'])
    const request = buildRequest(this.rng, {
      style,
      stream: true,
      models: [this.rng.pick(['o/stall', 'a/stall'])],
      secret: this.pickSecret(accountId),
      outputLimit: this.outputLimit(style),
    })
    await this.send(request, 'keep')
  }

  /** The client leaves a stream the provider stalls: it pays for what it was sent. */
  async leaveOpen(): Promise<void> {
    const open = this.open.splice(this.rng.int(0, this.open.length - 1), 1)[0]!
    this.operation = `leave the open ${open.sent.describe}`
    await leave(open.stream)
    const admission = open.decision.admission!
    const outcome = leftOpen(open.ask, admission.holdNano, admission.candidates)
    this.model.settle(open.admitted, outcome)
    open.sent.outcome = outcome
  }

  /**
   * A spend cap set just around what a key has spent and holds for an open stream, then a request with
   * that key: open holds count toward the cap (spec: in-progress requests count).
   */
  async capBesideOpenHold(): Promise<void> {
    const open = this.rng.pick(this.open)
    const key = this.model.keys.get(open.admitted.keyId)!
    if (this.model.usable(key)) await this.capThenAsk(key)
  }

  /** A spend cap of the key set a little above what it has spent and holds, then a request with it. */
  async capThenAsk(key: KeyModel): Promise<void> {
    const field = this.rng.chance(0.7) ? 'dailyNano' : 'monthlyNano'
    const spent = field === 'dailyNano' ? this.model.daySpent(key) : this.model.monthSpent(key)
    const cap = spent + key.held + this.rng.int(1, 600_000)
    this.operation = `cap ${field} of ${key.id} at ${cap} (spent ${spent}, held ${key.held})`
    const answer = await operator(this.gw, 'PATCH', `/keys/${key.id}`, {
      [field === 'dailyNano' ? 'dailyLimitNano' : 'monthlyLimitNano']: cap,
    })
    this.same(answer.status, 200, 'key changed')
    this.model.changeLimits(key, { ...key.limits, [field]: cap })
    const style = this.rng.pick<Style>(['chat', 'responses', 'messages'])
    await this.send(
      buildRequest(this.rng, {
        style,
        stream: this.rng.chance(0.5),
        models: [this.rng.pick(answeringModels)],
        secret: key.secret,
        outputLimit: style === 'responses' ? this.rng.int(16, 200) : this.rng.int(1, 200),
      }),
      'whole',
    )
  }

  /** A slow stream its client leaves after a few deltas. */
  async leaveSlow(): Promise<void> {
    const accountId = this.pickAccount()
    const style = this.rng.pick<Style>(['chat', 'responses', 'messages'])
    const request = buildRequest(this.rng, {
      style,
      stream: true,
      models: [this.rng.pick(['o/slow', 'a/slow'])],
      secret: this.pickSecret(accountId),
      outputLimit: this.outputLimit(style),
      leaveAfter: this.rng.int(1, 6),
    })
    await this.send(request, 'leave')
  }

  async credit(): Promise<void> {
    const amount = this.rng.weighted<() => number>([
      [() => this.rng.int(1, 1_000), 1],
      [() => this.rng.int(100_000, 3_000_000), 7],
      [() => this.rng.int(3_000_000, 12_000_000), 2],
    ])()
    await this.creditBy(this.pickAccount(), amount)
  }

  async creditBy(accountId: string, amount: number): Promise<void> {
    this.operation = `credit ${amount} to ${accountId}`
    const answer = await operator(this.gw, 'POST', `/accounts/${accountId}/credits`, {
      amountNano: amount,
    })
    this.same(answer.status, 200, 'credit answered')
    this.model.credit(accountId, amount)
    this.credits.get(accountId)!.push(amount)
  }

  /**
   * New limits for a key: some fields changed, caps near what the key has spent and holds. Caps and
   * limits are at least 1: the gateway reads a stored 0 as "no limit", where the spec's cap of 0 would
   * allow no spend (a difference reported apart).
   */
  randomLimits(key?: KeyModel): KeyLimits {
    const limits = key ? { ...key.limits } : noLimits()
    const spent = key ? this.model.daySpent(key) + key.held : 0
    const monthSpent = key ? this.model.monthSpent(key) + key.held : 0
    const rng = this.rng
    if (rng.chance(0.3))
      limits.rpm = rng.weighted([
        [null, 4],
        [rng.int(1, 4), 1],
        [50, 1],
      ])
    if (rng.chance(0.2))
      limits.tpm = rng.weighted([
        [null, 3],
        [rng.int(200, 3_000), 2],
        [100_000, 1],
      ])
    if (rng.chance(0.2))
      limits.concurrency = rng.weighted([
        [null, 3],
        [1, 2],
        [2, 1],
      ])
    if (rng.chance(0.35))
      limits.dailyNano = rng.weighted([
        [null, 3],
        [spent + rng.int(1, 3_000_000), 4],
      ])
    if (rng.chance(0.15))
      limits.monthlyNano = rng.weighted([
        [null, 3],
        [monthSpent + rng.int(1, 6_000_000), 2],
      ])
    if (rng.chance(0.15))
      limits.allowedModels = rng.chance(0.5)
        ? null
        : [...new Set(Array.from({ length: rng.int(4, 16) }, () => rng.pick(plainModels)))]
    return limits
  }

  async newKey(): Promise<void> {
    const accountId = this.pickAccount()
    const limits = this.randomLimits()
    this.operation = `new key of ${accountId} with ${JSON.stringify(limits)}`
    await this.createKey(accountId, limits)
  }

  async keyLimits(): Promise<void> {
    const keys = this.keysOf(this.pickAccount()).filter((key) => !key.revoked)
    if (keys.length === 0) return
    const key = this.rng.pick(keys)
    const limits = this.randomLimits(key)
    const changes: Record<string, unknown> = {}
    const fields = [
      ['rpm', 'rpmLimit'],
      ['tpm', 'tpmLimit'],
      ['concurrency', 'concurrency'],
      ['dailyNano', 'dailyLimitNano'],
      ['monthlyNano', 'monthlyLimitNano'],
      ['allowedModels', 'allowedModels'],
    ] as const
    for (const [field, name] of fields)
      if (JSON.stringify(limits[field]) !== JSON.stringify(key.limits[field]))
        changes[name] = limits[field]
    if (Object.keys(changes).length === 0) return
    this.operation = `change key ${key.id}: ${JSON.stringify(changes)}`
    const answer = await operator(this.gw, 'PATCH', `/keys/${key.id}`, changes)
    this.same(answer.status, 200, 'key changed')
    this.model.changeLimits(key, limits)
  }

  async accountLimits(): Promise<void> {
    const accountId = this.pickAccount()
    const account = this.model.accounts.get(accountId)!
    const pick = () =>
      this.rng.weighted<number | null>([
        [null, 4],
        [0, 1],
        [this.rng.int(1, 6), 1],
        [this.rng.int(1_000, 8_000), 1],
        [1_000_000, 1],
      ])
    const changes = {
      rpmLimit: this.rng.chance(0.5) ? pick() : undefined,
      tpmLimit: this.rng.chance(0.3) ? pick() : undefined,
      concurrency: this.rng.chance(0.4) ? pick() : undefined,
    }
    if (Object.values(changes).every((value) => value === undefined)) changes.rpmLimit = null
    this.operation = `change account ${accountId}'s limits: ${JSON.stringify(changes)}`
    const answer = await operator(this.gw, 'PATCH', `/accounts/${accountId}/limits`, changes)
    this.same(answer.status, 200, 'account limits changed')
    // 0 is no limit, null the service's default (which this test sets to no limit).
    const limit = (value: number | null) => (value === 0 ? null : value)
    if (changes.rpmLimit !== undefined) account.limits.rpm = limit(changes.rpmLimit)
    if (changes.tpmLimit !== undefined) account.limits.tpm = limit(changes.tpmLimit)
    if (changes.concurrency !== undefined) account.limits.concurrency = limit(changes.concurrency)
  }

  /** Suspends an account, or lifts the suspension of one. */
  async suspension(): Promise<void> {
    const suspended = [...this.model.accounts.values()].find((account) => account.suspended)
    const accountId = suspended?.id ?? this.pickAccount()
    const account = this.model.accounts.get(accountId)!
    const action = account.suspended ? 'unsuspend' : 'suspend'
    this.operation = `${action} ${accountId}`
    const answer = await operator(
      this.gw,
      'POST',
      `/accounts/${accountId}/${action}`,
      account.suspended ? undefined : { reason: 'operator' },
    )
    this.same(answer.status, 200, `${action} answered`)
    account.suspended = !account.suspended
  }

  /** POST /keys/:id/rotate with the key itself, mostly a usable one (sometimes another key of the account). */
  async rotate(): Promise<void> {
    const accountId = this.pickAccount()
    const account = this.model.accounts.get(accountId)!
    const keys = this.keysOf(accountId)
    const usable = keys.filter((key) => this.model.usable(key))
    const target =
      usable.length > 0 && this.rng.chance(0.9) ? this.rng.pick(usable) : this.rng.pick(keys)
    const by = this.rng.chance(0.8) ? target : this.rng.pick(keys)
    this.operation = `rotate ${target.id} with ${by.id}`
    const response = await callApi(this.gw, `/keys/${target.id}/rotate`, undefined, {
      authorization: `Bearer ${by.secret}`,
    })
    const expected = !this.model.usable(by)
      ? 'invalid_api_key'
      : account.suspended
        ? 'account_suspended'
        : by.expiresAt !== null || by !== target
          ? 'forbidden'
          : undefined
    const body = (await response.json()) as {
      key: string
      id: string
      oldKey: { expiresAt: string }
      error?: { code: string }
    }
    if (expected) {
      this.same(
        [response.status, response.headers.get('x-service-error-code')],
        [statusOf[expected], expected],
        'rotation refused',
      )
      return
    }
    this.same(response.status, 201, 'rotation answered')
    this.same(body.oldKey.expiresAt, new Date(this.now + GRACE_MS).toISOString(), 'end of grace')
    target.expiresAt = this.now + GRACE_MS
    // The new key counts in its lineage's windows: its holds, requests in flight and charges are the
    // lineage's, whichever key of it makes them.
    const lineage = this.model.keys.get(target.lineageId)!
    const rotated = {
      ...target,
      id: body.id,
      secret: body.key,
      expiresAt: null,
      limits: structuredClone(target.limits),
    }
    for (const counter of ['held', 'inFlight', 'charges'] as const)
      Object.defineProperty(rotated, counter, {
        get: () => lineage[counter],
        set: (value) => {
          ;(lineage as Record<typeof counter, unknown>)[counter] = value
        },
      })
    this.model.keys.set(body.id, rotated)
  }

  /** Revokes a key (not an account's last usable one, so that requests keep coming). */
  async revoke(): Promise<void> {
    const keys = this.keysOf(this.pickAccount()).filter((key) => !key.revoked)
    const usable = keys.filter((key) => this.model.usable(key))
    const revocable = usable.length > 1 ? keys : keys.filter((key) => !this.model.usable(key))
    if (revocable.length === 0) return
    const key = this.rng.pick(revocable)
    this.operation = `revoke ${key.id}`
    const answer = await operator(this.gw, 'POST', `/keys/${key.id}/revoke`)
    this.same(answer.status, 200, 'revocation answered')
    key.revoked = true
  }

  /** Moves the clock: past rate windows, to the next day or month, or to a rotated key's end of grace. */
  async moveClock(): Promise<void> {
    const inGrace = [...this.model.keys.values()].filter(
      (key) => key.expiresAt !== null && key.expiresAt > this.now,
    )
    const to = this.rng.weighted<() => number>([
      [() => this.now + this.rng.int(2 * MINUTE, 20 * MINUTE), 5],
      [() => this.now + this.rng.int(1, 8) * HOUR, 2],
      [() => (Math.floor(this.now / DAY) + 1) * DAY + this.rng.int(0, 1_000), 3],
      [() => this.now + 32 * DAY, 1],
      [() => this.rng.pick(inGrace).expiresAt! - this.rng.int(0, 1), inGrace.length > 0 ? 3 : 0],
    ])()
    this.operation = `move the clock by ${to - this.now} ms`
    this.now = to
  }
}

function noLimits(): KeyLimits {
  return {
    rpm: null,
    tpm: null,
    concurrency: null,
    dailyNano: null,
    monthlyNano: null,
    allowedModels: null,
  }
}

function base58(rng: Prng, length: number): string {
  const alphabet = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'
  return Array.from({ length }, () => alphabet[rng.int(0, alphabet.length - 1)]).join('')
}

for (const { store, database, needs } of storeSetups) {
  describeWith(
    [...needs],
    `the money model with the ${store} admission store on ${database === 'postgres' ? 'PostgreSQL' : 'the embedded database'}`,
    () => {
      let gw: TestGateway
      beforeAll(async () => {
        gw = await startTestGateway({
          store,
          database,
          models: catalogModels(),
          env: {
            // Limits start off; the steps set them. Breakers and the invalid-key limit are not money rules.
            ACCOUNT_RPM_LIMIT: '0',
            ACCOUNT_TPM_LIMIT: '0',
            ACCOUNT_CONCURRENCY_LIMIT: '0',
            BREAKER_FAILURES: '1000000',
            INVALID_KEYS_PER_MINUTE: '1000000',
            STREAM_IDLE_TIMEOUT_MS: '600000',
          },
        })
      })
      afterAll(() => gw?.close())

      test(`${STEPS} random steps agree with the model`, async () => {
        await new Run(gw, store, `${store} store, ${database} database`).run(STEPS)
      }, 180_000)
    },
  )
}
