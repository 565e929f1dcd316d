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
import { DecisionQueue } from './decision-queue.ts'
import { ackOutbox, markRecovered, pendingOutbox } from './redis-outbox.ts'
import { redisKeys } from './redis-keys.ts'
import { parseAdmit, parseEnded, snapshotFromFields, type Reply } from './redis-replies.ts'
import { limitArguments, withScripts, type ScriptCommands } from './scripts.ts'
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
/** Each process registers an account again at most this often (for the same deadline). */
const REGISTER_EVERY_MS = 30_000
const SWEEP_LOCK_MS = 5_000

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
  // Connection errors surface as failed commands; the last one says why a first connection failed.
  let lastError: Error | undefined
  client.on('error', (error: Error) => {
    lastError = error
  })
  await client.connect().catch((error: Error) => {
    client.disconnect()
    throw lastError && lastError !== error ? lastError : error
  })
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
  private readonly decisions = new DecisionQueue((accountId, args) => this.call(accountId, args))
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

  async pendingLedger(olderThanMs: number): Promise<LedgerEntry[]> {
    return pendingOutbox(this.redis, await this.serverTime(), olderThanMs)
  }

  ackLedger(entries: { accountId: string; requestId: string }[]): Promise<void> {
    return ackOutbox(this.redis, entries)
  }

  ackRecovered(entries: LedgerEntry[]): Promise<void> {
    return markRecovered(this.redis, entries)
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
   * Any decision of decide.lua, grouped with the account's others (decision-queue.ts).
   * `holdDeadlineMs` is the longest a hold or lease it opens may stay open unextended.
   */
  decide(
    accountId: string,
    args: (string | number)[],
    holdDeadlineMs = this.holdDeadlineMs,
  ): Promise<Reply> {
    this.register(accountId, holdDeadlineMs)
    return this.decisions.decide(accountId, args)
  }

  /** One call of decide.lua with a batch of an account's decisions. */
  private call(accountId: string, args: (string | number)[]): Promise<Reply[]> {
    // The cluster client sends a call again by itself after its connection closed (a master killed),
    // possibly once this store stopped waiting and sent the decisions again: past the wait, the script
    // refuses it, so a decision is never applied behind the back of the one that replaced it.
    const notAfterMs = Date.now() + this.clockOffsetMs + this.callTimeoutMs
    return this.redis.gwDecide(
      redisKeys.state(accountId),
      redisKeys.holds(accountId),
      redisKeys.outbox(accountId),
      notAfterMs,
      ...args,
    )
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
