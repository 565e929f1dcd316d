/**
 * The admission store on Redis: each decision is a Lua function (lua/admit.lua, settle.lua, release.lua)
 * run atomically inside Redis, so concurrent processes never interleave inside a decision; time comes
 * from Redis. A request costs one round trip to admit and one to settle; an account's decisions that
 * arrive while its calls are in flight go together in the next call (lua/decide.lua runs them in order),
 * which saves per-call overhead on both sides under load. Commands time out after a bounded wait and are
 * never queued while disconnected: an unreachable store fails closed.
 */
import type { RedisOptions } from 'ioredis'
import { connectRedis, type RedisClient } from '../redis-client.ts'
import type { AccountLimits, KeyLimits } from '../../core/key-record.ts'
import { redisKeys } from './redis-keys.ts'
import {
  parseAdmit,
  parseEnded,
  parseOutboxEntry,
  snapshotFromFields,
  type Reply,
} from './redis-replies.ts'
import { withScripts, type ScriptCommands } from './scripts.ts'
import {
  HOLD_DEADLINE_MS,
  type AccountSeed,
  type AccountSnapshot,
  type AdmissionStore,
  type AdmitInput,
  type AdmitResult,
  type CreditResult,
  type LedgerEntry,
  type ReleaseResult,
  type SettleInput,
  type SettleResult,
  type SweepResult,
} from './store.ts'

type ScriptClient = RedisClient & ScriptCommands

type Decision = {
  args: (string | number)[]
  resolve: (reply: Reply) => void
  reject: (error: unknown) => void
}
type AccountQueue = { inFlight: number; waiting: Decision[] }

/** Most decisions in one call. */
const MAX_BATCH = 32
/** Calls in flight per account; decisions arriving meanwhile wait and go together. */
const MAX_IN_FLIGHT = 2

export type RedisStoreOptions = {
  url: string
  keyPrefix?: string
  /** Bound on each call; past it the caller treats the decision as unconfirmed. */
  timeoutMs: number
  /** Life of a hold that no settle ends; the spec's 20 minutes unless a test shortens it. */
  holdDeadlineMs?: number
}

/**
 * An account stays in the sweep's set this long past the deadline of the last hold or lease opened in
 * it, so that the sweep also finds the outbox entries a stopped process left (whatever the clocks' skew).
 */
const KEEP_AFTER_DEADLINE_MS = 40 * 60_000
/**
 * An outbox entry recovery wrote to Postgres is kept this long as a mark (its value starts with
 * RECOVERED_MARK), so a charge its process sends again after a lost answer is taken once. Shorter than
 * KEEP_AFTER_DEADLINE_MS, so the sweep still visits the account when the mark is to go.
 */
const RECOVERED_KEPT_MS = 30 * 60_000
const RECOVERED_MARK = '~'
/** Each process registers an account again at most this often (for the same deadline). */
const REGISTER_EVERY_MS = 30_000
const SWEEP_LOCK_MS = 5_000

/** A key's and its account's limits in the order the scripts read them (admit.lua, lease.lua). */
export function limitArguments(key: KeyLimits, account: AccountLimits): number[] {
  return [
    key.rpm,
    key.tpm,
    key.concurrency,
    key.dailyNano,
    key.monthlyNano,
    account.rpm,
    account.tpm,
    account.concurrency,
  ]
}

export function redisClientOptions(options: RedisStoreOptions): RedisOptions {
  return {
    keyPrefix: options.keyPrefix || undefined,
    commandTimeout: options.timeoutMs,
    connectTimeout: Math.max(1000, options.timeoutMs),
    enableOfflineQueue: false,
    enableAutoPipelining: false,
    maxRetriesPerRequest: 0,
    lazyConnect: true,
    // Keep trying to reconnect in the background; requests meanwhile fail closed.
    retryStrategy: (attempt) => Math.min(attempt * 100, 2000),
  }
}

export async function createRedisStore(options: RedisStoreOptions): Promise<RedisAdmissionStore> {
  const client = connectRedis(options.url, redisClientOptions(options))
  client.on('error', () => {}) // connection errors surface as failed commands
  await client.connect()
  const store = new RedisAdmissionStore(
    await withScripts(client),
    options.holdDeadlineMs,
    options.timeoutMs,
  )
  await store.serverTime().catch(() => undefined) // measured again by every sweep
  return store
}

export class RedisAdmissionStore implements AdmissionStore {
  readonly kind = 'redis'
  private readonly registered = new Map<string, number>()
  private readonly queues = new Map<string, AccountQueue>()
  /** Redis's clock minus this process's, as last measured (every sweep reads it). */
  private clockOffsetMs = 0

  constructor(
    readonly redis: ScriptClient,
    private readonly holdDeadlineMs = HOLD_DEADLINE_MS,
    /** How long a call is waited for (the client's command timeout); a call past it is not applied. */
    private readonly callTimeoutMs = 60_000,
  ) {}

  async admit(input: AdmitInput): Promise<AdmitResult> {
    const { accountId, keyLimits: key, accountLimits: account } = input
    const holdDeadlineMs = input.holdDeadlineMs ?? this.holdDeadlineMs
    const reply = await this.decide(
      accountId,
      [
        'admit',
        input.requestId,
        input.keyId,
        input.holdNano,
        input.tokens,
        ...limitArguments(key, account),
        holdDeadlineMs,
        input.guardrail?.id ?? '',
        input.guardrail?.budgetNano ?? 0,
        input.freePerDay ?? -1,
      ],
      holdDeadlineMs,
    )
    return parseAdmit(reply)
  }

  async settle(input: SettleInput): Promise<SettleResult> {
    const { accountId } = input
    const reply = await this.decide(accountId, [
      'settle',
      input.requestId,
      input.costNano,
      input.tokens,
      input.forgive ? 1 : 0,
      input.record ?? '',
    ])
    return parseEnded(reply)
  }

  async release(accountId: string, requestId: string): Promise<ReleaseResult> {
    const reply = await this.decide(accountId, ['release', requestId])
    if (reply[0] === 'released') return { status: 'released', availableNano: Number(reply[1]) }
    return parseEnded(reply)
  }

  async seed(accountId: string, seed: AccountSeed): Promise<boolean> {
    const args: (string | number)[] = [
      seed.balanceNano,
      seed.recentCreditIds.length,
      ...seed.recentCreditIds,
    ]
    args.push(seed.keySpend.length)
    for (const key of seed.keySpend) args.push(key.keyId, key.daySpentNano, key.monthSpentNano)
    for (const guardrail of seed.guardrailSpend)
      args.push(guardrail.guardrailId, guardrail.monthSpentNano)
    const result = await this.redis.gwSeed(
      redisKeys.state(accountId),
      redisKeys.credits(accountId),
      ...args,
    )
    return result === 'seeded'
  }

  async credit(accountId: string, entryId: string, amountNano: number): Promise<CreditResult> {
    const reply = await this.redis.gwCredit(
      redisKeys.state(accountId),
      redisKeys.credits(accountId),
      entryId,
      amountNano,
    )
    if (reply[0] === 'cold') return { status: 'cold' }
    return { status: reply[0] === 'ok' ? 'applied' : 'again', availableNano: Number(reply[1]) }
  }

  async extend(accountId: string, requestIds: string[]): Promise<number> {
    if (requestIds.length === 0) return 0
    this.register(accountId, this.holdDeadlineMs)
    return this.redis.gwExtend(redisKeys.holds(accountId), this.holdDeadlineMs, ...requestIds)
  }

  async sweep(): Promise<SweepResult> {
    const expired: SweepResult['expired'] = []
    await this.registerAgain()
    // One sweeper at a time; the scripts are safe to run twice, but there is no need to.
    const token = crypto.randomUUID()
    const locked = await this.redis.set(redisKeys.sweepLock, token, 'PX', SWEEP_LOCK_MS, 'NX')
    if (locked !== 'OK') return { expired }
    try {
      const nowMs = await this.serverTime()
      await this.redis.zremrangebyscore(redisKeys.activeAccounts, '-inf', String(nowMs))
      for (const accountId of await this.redis.zrange(redisKeys.activeAccounts, '0', '-1')) {
        const [requestIds] = await this.redis.gwSweep(
          redisKeys.state(accountId),
          redisKeys.holds(accountId),
        )
        for (const requestId of requestIds) expired.push({ accountId, requestId })
      }
    } finally {
      // Let the next sweeper in at once; a lock that timed out may already be another's (then it stays).
      if ((await this.redis.get(redisKeys.sweepLock)) === token)
        await this.redis.del(redisKeys.sweepLock)
    }
    return { expired }
  }

  /** Also drops the marks of recovered entries once they are past their keeping (see `ackRecovered`). */
  async pendingLedger(olderThanMs: number): Promise<LedgerEntry[]> {
    const now = await this.serverTime()
    const entries: LedgerEntry[] = []
    for (const accountId of await this.redis.zrange(redisKeys.activeAccounts, '0', '-1')) {
      const outbox = await this.redis.hgetall(redisKeys.outbox(accountId))
      const spent: string[] = []
      for (const [requestId, value] of Object.entries(outbox)) {
        const recovered = value.startsWith(RECOVERED_MARK)
        const entry = parseOutboxEntry(accountId, requestId, recovered ? value.slice(1) : value)
        if (!entry) continue
        if (!recovered && entry.atMs <= now - olderThanMs) entries.push(entry)
        if (recovered && entry.atMs <= now - RECOVERED_KEPT_MS) spent.push(requestId)
      }
      if (spent.length > 0) await this.redis.hdel(redisKeys.outbox(accountId), ...spent)
    }
    return entries
  }

  async ackLedger(entries: { accountId: string; requestId: string }[]): Promise<void> {
    const byAccount = new Map<string, string[]>()
    for (const entry of entries) {
      const ids = byAccount.get(entry.accountId) ?? []
      ids.push(entry.requestId)
      byAccount.set(entry.accountId, ids)
    }
    await Promise.all(
      [...byAccount].map(([accountId, ids]) =>
        this.redis.hdel(redisKeys.outbox(accountId), ...ids),
      ),
    )
  }

  async ackRecovered(entries: LedgerEntry[]): Promise<void> {
    // The mark keeps what the scripts read of an entry (key, amounts, time): a settle sent again answers
    // with the charge taken, a lease charge sent again is skipped. The request's log row is not kept.
    await Promise.all(
      entries.map((entry) =>
        this.redis.hset(
          redisKeys.outbox(entry.accountId),
          entry.requestId,
          `${RECOVERED_MARK}${entry.keyId}|${entry.chargedNano}|${entry.writtenOffNano}|${entry.atMs}|`,
        ),
      ),
    )
  }

  async snapshot(accountId: string): Promise<AccountSnapshot> {
    return snapshotFromFields(await this.redis.hgetall(redisKeys.state(accountId)))
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect())
  }

  async ping(): Promise<void> {
    await this.redis.ping()
  }

  /**
   * Sends a decision at once when the account has no call in flight; otherwise it waits with the others
   * for the call in flight to return, and they go together (group commit). Any decision of decide.lua;
   * `holdDeadlineMs` is the longest a hold or lease it opens may stay open unextended.
   */
  decide(
    accountId: string,
    args: (string | number)[],
    holdDeadlineMs = this.holdDeadlineMs,
  ): Promise<Reply> {
    this.register(accountId, holdDeadlineMs)
    return new Promise((resolve, reject) => {
      let queue = this.queues.get(accountId)
      if (!queue) {
        queue = { inFlight: 0, waiting: [] }
        this.queues.set(accountId, queue)
      }
      queue.waiting.push({ args, resolve, reject })
      if (queue.inFlight < MAX_IN_FLIGHT) this.send(accountId, queue)
    })
  }

  /**
   * One call with the account's waiting decisions: settles, releases, lease charges and shrinks first
   * (they free what admissions may need), then admissions in arrival order, then lease growth (which
   * takes only what the admissions left).
   */
  private send(accountId: string, queue: AccountQueue): void {
    const waiting = queue.waiting.splice(0, MAX_BATCH)
    if (waiting.length === 0) {
      if (queue.inFlight === 0) this.queues.delete(accountId)
      return
    }
    const phase = (decision: Decision) =>
      decision.args[0] === 'admit' ? 1 : decision.args[0] === 'grow' ? 2 : 0
    const batch = [0, 1, 2].flatMap((at) => waiting.filter((decision) => phase(decision) === at))
    queue.inFlight += 1
    // The cluster client sends a call again by itself after its connection closed (a master killed),
    // possibly once this store stopped waiting and sent the decisions again: past the wait, the script
    // refuses it, so a decision is never applied behind the back of the one that replaced it.
    const notAfterMs = Date.now() + this.clockOffsetMs + this.callTimeoutMs
    this.redis
      .gwDecide(
        redisKeys.state(accountId),
        redisKeys.holds(accountId),
        redisKeys.outbox(accountId),
        notAfterMs,
        ...batch.flatMap((decision) => decision.args),
      )
      .then(
        (replies) => batch.forEach((decision, index) => decision.resolve(replies[index]!)),
        (error) => batch.forEach((decision) => decision.reject(error)),
      )
      .finally(() => {
        queue.inFlight -= 1
        this.send(accountId, queue)
      })
  }

  /**
   * Writes this process's registrations again (a Redis that restarted or failed over may have lost
   * some, and the process would not register those accounts again until their next admission).
   */
  private async registerAgain(): Promise<void> {
    const now = Date.now()
    const entries = [...this.registered].filter(([, until]) => until > now)
    for (let start = 0; start < entries.length; start += 1_000) {
      const members = entries.slice(start, start + 1_000).flatMap(([id, until]) => [until, id])
      await this.redis.zadd(redisKeys.activeAccounts, 'GT', ...members)
    }
  }

  /** Keeps the account in the sweep's set past the deadline of any hold opened now (score: until when). */
  private register(accountId: string, holdDeadlineMs: number): void {
    const now = Date.now()
    const until = now + holdDeadlineMs + KEEP_AFTER_DEADLINE_MS
    const registered = this.registered.get(accountId)
    if (registered !== undefined && registered >= until - REGISTER_EVERY_MS) return
    this.registered.set(accountId, until)
    if (this.registered.size > 100_000) this.registered.clear()
    this.redis
      .zadd(redisKeys.activeAccounts, 'GT', until, accountId)
      .catch(() => this.registered.delete(accountId))
  }

  /** Redis's clock (the one the scripts read); also corrects this process's estimate of it. */
  async serverTime(): Promise<number> {
    const sentAt = Date.now()
    const [seconds, micros] = await this.redis.time()
    const server = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
    this.clockOffsetMs = server - Math.round((sentAt + Date.now()) / 2)
    return server
  }
}
