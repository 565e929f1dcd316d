/**
 * The admission store on Redis: each decision is one Lua script (lua/*.lua, loaded with defineCommand),
 * so a request costs one round trip to admit and one to settle, and concurrent processes never
 * interleave inside a decision. Time comes from Redis. Commands time out after a bounded wait and are
 * never queued while disconnected: an unreachable store fails closed.
 */
import Redis, { type RedisOptions } from 'ioredis'
import { join } from 'node:path'
import { redisKeys } from './redis-keys.ts'
import {
  HOLD_DEADLINE_MS,
  type AccountSeed,
  type AccountSnapshot,
  type AdmissionStore,
  type AdmitInput,
  type AdmitResult,
  type CreditResult,
  type KeySnapshot,
  type LedgerEntry,
  type RateLimitName,
  type ReleaseResult,
  type SettleInput,
  type SettleResult,
  type SweepResult,
} from './store.ts'

type Reply = (string | number)[]

type Scripts = {
  gwAdmit(...args: (string | number)[]): Promise<Reply>
  gwSettle(...args: (string | number)[]): Promise<Reply>
  gwRelease(...args: (string | number)[]): Promise<Reply>
  gwSweep(...args: (string | number)[]): Promise<[string[], number]>
  gwExtend(...args: (string | number)[]): Promise<number>
  gwCredit(...args: (string | number)[]): Promise<Reply>
  gwSeed(...args: (string | number)[]): Promise<string>
}

type ScriptClient = Redis & Scripts

const scriptKeys: Record<keyof Scripts, [file: string, keys: number]> = {
  gwAdmit: ['admit.lua', 3],
  gwSettle: ['settle.lua', 4],
  gwRelease: ['release.lua', 3],
  gwSweep: ['sweep.lua', 3],
  gwExtend: ['extend.lua', 2],
  gwCredit: ['credit.lua', 2],
  gwSeed: ['seed.lua', 2],
}

/** Loads the scripts, each after the shared prelude. */
async function defineScripts(client: Redis): Promise<ScriptClient> {
  const dir = join(import.meta.dir, 'lua')
  const prelude = await Bun.file(join(dir, 'lib.lua')).text()
  for (const [name, [file, numberOfKeys]] of Object.entries(scriptKeys)) {
    const lua = `${prelude}\n${await Bun.file(join(dir, file)).text()}`
    client.defineCommand(name, { numberOfKeys, lua })
  }
  return client as ScriptClient
}

export type RedisStoreOptions = {
  url: string
  keyPrefix?: string
  /** Bound on each call; past it the caller treats the decision as unconfirmed. */
  timeoutMs: number
  /** Life of a hold that no settle ends; the spec's 20 minutes unless a test shortens it. */
  holdDeadlineMs?: number
}

/** Accounts admitted into recently are registered for the sweep at most this often per process. */
const REGISTER_EVERY_MS = 30_000
/** An account with no admission for this long has no open hold or tombstone left to sweep. */
const ACTIVE_WINDOW_MS = HOLD_DEADLINE_MS * 3
const SWEEP_BATCH = 200
const SWEEP_LOCK_MS = 5_000

export function redisClientOptions(options: RedisStoreOptions): RedisOptions {
  return {
    keyPrefix: options.keyPrefix || undefined,
    commandTimeout: options.timeoutMs,
    connectTimeout: Math.max(1000, options.timeoutMs),
    enableOfflineQueue: false,
    enableAutoPipelining: true,
    maxRetriesPerRequest: 0,
    lazyConnect: true,
    // Keep trying to reconnect in the background; requests meanwhile fail closed.
    retryStrategy: (attempt) => Math.min(attempt * 100, 2000),
  }
}

export async function createRedisStore(options: RedisStoreOptions): Promise<RedisAdmissionStore> {
  const client = new Redis(options.url, redisClientOptions(options))
  client.on('error', () => {}) // connection errors surface as failed commands
  await client.connect()
  return new RedisAdmissionStore(await defineScripts(client), options.holdDeadlineMs)
}

export class RedisAdmissionStore implements AdmissionStore {
  readonly kind = 'redis'
  private readonly registered = new Map<string, number>()

  constructor(
    readonly redis: ScriptClient,
    private readonly holdDeadlineMs = HOLD_DEADLINE_MS,
  ) {}

  async admit(input: AdmitInput): Promise<AdmitResult> {
    const { accountId, keyLimits: key, accountLimits: account } = input
    this.register(accountId)
    const reply = await this.redis.gwAdmit(
      redisKeys.state(accountId),
      redisKeys.holds(accountId),
      redisKeys.due(accountId),
      input.requestId,
      input.keyId,
      input.holdNano,
      input.tokens,
      key.rpm,
      key.tpm,
      key.concurrency,
      key.dailyNano,
      key.monthlyNano,
      account.rpm,
      account.tpm,
      account.concurrency,
      this.holdDeadlineMs,
    )
    return parseAdmit(reply)
  }

  async settle(input: SettleInput): Promise<SettleResult> {
    const { accountId } = input
    const reply = await this.redis.gwSettle(
      redisKeys.state(accountId),
      redisKeys.holds(accountId),
      redisKeys.due(accountId),
      redisKeys.outbox(accountId),
      input.requestId,
      input.costNano,
      input.tokens,
      input.forgive ? 1 : 0,
    )
    const status = reply[0] as SettleResult['status']
    if (status === 'settled') {
      return { status, chargedNano: Number(reply[1]), writtenOffNano: Number(reply[2]), availableNano: Number(reply[3]), again: reply[4] === 'again' }
    }
    return { status, availableNano: Number(reply[1]) }
  }

  async release(accountId: string, requestId: string): Promise<ReleaseResult> {
    const reply = await this.redis.gwRelease(
      redisKeys.state(accountId),
      redisKeys.holds(accountId),
      redisKeys.due(accountId),
      requestId,
    )
    const status = reply[0] as ReleaseResult['status']
    if (status === 'released') return { status, availableNano: Number(reply[1]), again: reply[2] === 'again' }
    return { status, availableNano: Number(reply[1]) }
  }

  async seed(accountId: string, seed: AccountSeed): Promise<boolean> {
    const args: (string | number)[] = [seed.balanceNano, seed.recentCreditIds.length, ...seed.recentCreditIds]
    for (const key of seed.keySpend) args.push(key.keyId, key.daySpentNano, key.monthSpentNano)
    const result = await this.redis.gwSeed(redisKeys.state(accountId), redisKeys.credits(accountId), ...args)
    return result === 'seeded'
  }

  async credit(accountId: string, entryId: string, amountNano: number): Promise<CreditResult> {
    const reply = await this.redis.gwCredit(redisKeys.state(accountId), redisKeys.credits(accountId), entryId, amountNano)
    if (reply[0] === 'cold') return { status: 'cold' }
    return { status: reply[0] === 'ok' ? 'applied' : 'again', availableNano: Number(reply[1]) }
  }

  async extend(accountId: string, requestIds: string[]): Promise<number> {
    if (requestIds.length === 0) return 0
    this.register(accountId, true)
    return this.redis.gwExtend(redisKeys.holds(accountId), redisKeys.due(accountId), this.holdDeadlineMs, ...requestIds)
  }

  async sweep(): Promise<SweepResult> {
    const expired: SweepResult['expired'] = []
    // One sweeper at a time; the scripts are safe to run twice, but there is no need to.
    const locked = await this.redis.set(redisKeys.sweepLock, '1', 'PX', SWEEP_LOCK_MS, 'NX')
    if (locked !== 'OK') return { expired }
    const nowMs = await this.serverTime()
    await this.redis.zremrangebyscore(redisKeys.activeAccounts, '-inf', String(nowMs - ACTIVE_WINDOW_MS))
    for (const accountId of await this.redis.zrange(redisKeys.activeAccounts, '0', '-1')) {
      for (;;) {
        const [requestIds] = await this.redis.gwSweep(
          redisKeys.state(accountId),
          redisKeys.holds(accountId),
          redisKeys.due(accountId),
          SWEEP_BATCH,
        )
        for (const requestId of requestIds) expired.push({ accountId, requestId })
        if (requestIds.length < SWEEP_BATCH) break
      }
    }
    return { expired }
  }

  async pendingLedger(olderThanMs: number): Promise<LedgerEntry[]> {
    const cutoff = (await this.serverTime()) - olderThanMs
    const entries: LedgerEntry[] = []
    for (const accountId of await this.redis.zrange(redisKeys.activeAccounts, '0', '-1')) {
      const outbox = await this.redis.hgetall(redisKeys.outbox(accountId))
      for (const [requestId, value] of Object.entries(outbox)) {
        const entry = parseOutboxEntry(accountId, requestId, value)
        if (entry && entry.atMs <= cutoff) entries.push(entry)
      }
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
    await Promise.all([...byAccount].map(([accountId, ids]) => this.redis.hdel(redisKeys.outbox(accountId), ...ids)))
  }

  async snapshot(accountId: string): Promise<AccountSnapshot> {
    return snapshotFromFields(await this.redis.hgetall(redisKeys.state(accountId)))
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect())
  }

  private register(accountId: string, force = false): void {
    const now = Date.now()
    const last = this.registered.get(accountId)
    if (!force && last !== undefined && now - last < REGISTER_EVERY_MS) return
    this.registered.set(accountId, now)
    if (this.registered.size > 100_000) this.registered.clear()
    this.redis.zadd(redisKeys.activeAccounts, String(now), accountId).catch(() => this.registered.delete(accountId))
  }

  private async serverTime(): Promise<number> {
    const [seconds, micros] = await this.redis.time()
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
  }
}

function parseAdmit(reply: Reply): AdmitResult {
  switch (reply[0]) {
    case 'ok':
      return { ok: true, availableNano: Number(reply[1]), nowMs: Number(reply[2]) }
    case 'rate':
      return {
        ok: false,
        reason: 'rate',
        limit: reply[1] as RateLimitName,
        value: Number(reply[2]),
        retryAfterMs: Number(reply[3]),
        availableNano: Number(reply[4]),
      }
    case 'spend':
      return {
        ok: false,
        reason: 'spend',
        window: reply[1] as 'daily' | 'monthly',
        capNano: Number(reply[2]),
        resetAtMs: Number(reply[3]),
        availableNano: Number(reply[4]),
      }
    case 'credits':
      return { ok: false, reason: 'credits', availableNano: Number(reply[1]) }
    case 'cold':
      return { ok: false, reason: 'cold' }
    case 'duplicate':
      return { ok: false, reason: 'duplicate' }
    default:
      throw new Error(`admit returned ${String(reply[0])}`)
  }
}

function parseOutboxEntry(accountId: string, requestId: string, value: string): LedgerEntry | undefined {
  const [keyId, charged, writtenOff, at] = value.split('|')
  if (!keyId || charged === undefined || writtenOff === undefined || at === undefined) return undefined
  return { requestId, accountId, keyId, chargedNano: Number(charged), writtenOffNano: Number(writtenOff), atMs: Number(at) }
}

/** Reads the state hash the scripts keep (see lua/lib.lua) into a snapshot; spend of past windows counts as 0. */
function snapshotFromFields(fields: Record<string, string>): AccountSnapshot {
  const now = Date.now()
  const day = Math.floor(now / 86_400_000)
  const date = new Date(now)
  const month = date.getUTCFullYear() * 12 + date.getUTCMonth()
  const keys = new Map<string, KeySnapshot>()
  for (const [field, value] of Object.entries(fields)) {
    const split = field.lastIndexOf(':')
    if (split < 0) continue
    const keyId = field.slice(0, split)
    const key = keys.get(keyId) ?? { keyId, heldNano: 0, inFlight: 0, daySpentNano: 0, monthSpentNano: 0 }
    keys.set(keyId, key)
    const name = field.slice(split + 1)
    if (name === 'held') key.heldNano = Number(value)
    if (name === 'conc') key.inFlight = Number(value)
    if (name === 'ds' && Number(fields[`${keyId}:dw`]) === day) key.daySpentNano = Number(value)
    if (name === 'ms' && Number(fields[`${keyId}:mw`]) === month) key.monthSpentNano = Number(value)
  }
  const balanceNano = Number(fields.bal ?? 0)
  const heldNano = Number(fields.held ?? 0)
  return {
    loaded: fields.bal !== undefined,
    balanceNano,
    heldNano,
    availableNano: balanceNano - heldNano,
    inFlight: Number(fields.conc ?? 0),
    keys: [...keys.values()],
  }
}
