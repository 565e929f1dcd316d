// Requests and tokens per minute in two-second buckets, under a clock the test moves: the in-process
// store and the Redis scripts (decide.lua, run at the time given) make the same decisions, no span of
// 60 seconds ever holds more than a limit, every refusal is owed to what the buckets in view hold, and
// Retry-After names the first moment the request fits.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import Redis from 'ioredis'
import { MemoryAdmissionStore } from '../../../../proxy/stores/admission/memory-store.ts'
import { createRedisStore } from '../../../../proxy/stores/admission/redis-store.ts'
import { redisKeys } from '../../../../proxy/stores/admission/redis-keys.ts'
import { limitArguments } from '../../../../proxy/stores/admission/scripts.ts'
import { BUCKET_MS, BUCKETS } from '../../../../proxy/stores/admission/windows.ts'
import type { AdmitInput } from '../../../../proxy/stores/admission/store.ts'
import { deleteRedisKeys, describeWith, redisUrl, uniqueName } from '../../../helpers/services.ts'
import { prng } from '../../../helpers/prng.ts'

const BUCKET = BUCKET_MS
const bucketOf = (ms: number) => Math.floor(ms / BUCKET)
const keyLimits = { rpm: 12, tpm: 600, concurrency: 0, dailyNano: 0, monthlyNano: 0 }
const accountLimits = { rpm: 20, tpm: 900, concurrency: 0 }
const LIMITS = {
  key_rpm: keyLimits.rpm,
  key_tpm: keyLimits.tpm,
  account_rpm: accountLimits.rpm,
  account_tpm: accountLimits.tpm,
}
type LimitName = keyof typeof LIMITS

/** One store's answers at a time the test gives. */
type Clocked = {
  admit(atMs: number, requestId: string, keyId: string, tokens: number): Promise<Answer>
  settle(atMs: number, requestId: string, tokens: number): Promise<void>
}
type Answer = { ok: true } | { ok: false; limit: string; retryAfterMs: number }

type Entry = { keyId: string; at: number; tokens: number; actual: number; settledAt: number }

/**
 * Requests of two keys over fifteen minutes, about half again what the limits let through: bunched (many at one instant), spread, paused, and
 * placed just before bucket and minute boundaries, where a window that weighs the minute before would
 * let traffic through twice. Each settles later with fewer tokens than it was admitted with.
 */
async function run(store: Clocked, seed: number) {
  const random = prng(seed)
  let now = Date.UTC(2026, 10, 26, 12, 0, 0) + random.int(0, 59_999)
  const end = now + 900_000
  const log: Entry[] = []
  /** `seen`: how many admissions the log held when the store answered. */
  const answers: (Answer & { at: number; keyId: string; tokens: number; seen: number })[] = []
  const pending: (Entry & { requestId: string })[] = []
  let counter = 0
  while (now < end) {
    now += random.weighted([
      [0, 6],
      [random.int(1, 999), 6],
      [random.int(1_000, 3_000), 2],
      [BUCKET - (now % BUCKET) - random.int(1, 40), 2],
      [60_000 - (now % 60_000) - random.int(1, 40), 1],
    ] as const)
    // Settles due by now, in their order.
    pending.sort((a, b) => a.settledAt - b.settledAt)
    while (pending.length > 0 && pending[0]!.settledAt <= now) {
      const due = pending.shift()!
      await store.settle(due.settledAt, due.requestId, due.actual)
    }
    const keyId = random.pick(['key_a', 'key_b'])
    const tokens = random.int(1, 120)
    const requestId = `req_${seed}_${++counter}`
    const answer = await store.admit(now, requestId, keyId, tokens)
    answers.push({ ...answer, at: now, keyId, tokens, seen: log.length })
    if (answer.ok) {
      const entry = {
        keyId,
        at: now,
        tokens,
        actual: random.int(0, tokens),
        settledAt: now + random.int(0, 20_000),
      }
      log.push(entry)
      pending.push({ ...entry, requestId })
    }
  }
  return { log, answers }
}

/**
 * What the buckets in view at `now` hold of `entries`: requests, or tokens (an entry's actual tokens if
 * it settled by `asOf`, its estimate before).
 */
function inView(entries: Entry[], now: number, by: 'requests' | 'tokens', asOf = now): number {
  return entries
    .filter((e) => bucketOf(e.at) >= bucketOf(now) - (BUCKETS - 1))
    .reduce(
      (sum, e) => sum + (by === 'requests' ? 1 : e.settledAt <= asOf ? e.actual : e.tokens),
      0,
    )
}

function check(result: Awaited<ReturnType<typeof run>>) {
  const { log, answers } = result
  const groups: [LimitName, Entry[]][] = []
  for (const keyId of ['key_a', 'key_b']) {
    const ofKey = log.filter((e) => e.keyId === keyId)
    groups.push(['key_rpm', ofKey], ['key_tpm', ofKey])
  }
  groups.push(['account_rpm', log], ['account_tpm', log])
  // The sentence of the limit: no span of 60 seconds holds more than it (requests, or tokens used).
  for (const [name, entries] of groups) {
    for (const first of entries) {
      const span = entries.filter((e) => e.at >= first.at && e.at < first.at + 60_000)
      const used = name.endsWith('rpm') ? span.length : span.reduce((sum, e) => sum + e.actual, 0)
      expect(used).toBeLessThanOrEqual(LIMITS[name])
    }
  }
  let refused = 0
  for (const answer of answers) {
    const earlier = log.slice(0, answer.seen)
    const ofKey = earlier.filter((e) => e.keyId === answer.keyId)
    const checks: [LimitName, Entry[], 'requests' | 'tokens', number][] = [
      ['key_rpm', ofKey, 'requests', 1],
      ['key_tpm', ofKey, 'tokens', answer.tokens],
      ['account_rpm', earlier, 'requests', 1],
      ['account_tpm', earlier, 'tokens', answer.tokens],
    ]
    const over = checks.find(
      ([name, entries, by, cost]) => inView(entries, answer.at, by) + cost > LIMITS[name],
    )
    if (answer.ok) {
      expect(over).toBeUndefined()
      continue
    }
    refused += 1
    // Refused for the first limit the buckets in view leave no room under…
    expect(over).toBeDefined()
    const [name, entries, by, cost] = over!
    expect(answer.limit).toBe(name)
    // …and told to come back at the first bucket boundary from which it fits.
    let boundary = (bucketOf(answer.at) + 1) * BUCKET
    while (inView(entries, boundary, by, answer.at) + cost > LIMITS[name]) boundary += BUCKET
    expect(answer.retryAfterMs).toBe(Math.max(1_000, boundary - answer.at))
  }
  return refused
}

function memory(): Clocked {
  let now = 0
  const store = new MemoryAdmissionStore(() => now)
  const accountId = 'acct_memory'
  const seeded = store.seed(accountId, {
    balanceNano: 1e12,
    recentCreditIds: [],
    keySpend: [],
    guardrailSpend: [],
  })
  const input = (requestId: string, keyId: string, tokens: number): AdmitInput => ({
    requestId,
    accountId,
    keyId,
    holdNano: 1_000,
    tokens,
    keyLimits,
    accountLimits,
  })
  return {
    async admit(atMs, requestId, keyId, tokens) {
      await seeded
      now = atMs
      const result = await store.admit(input(requestId, keyId, tokens))
      if (result.ok) return { ok: true }
      if (result.reason !== 'rate') throw new Error(`refused: ${result.reason}`)
      return { ok: false, limit: result.limit, retryAfterMs: result.retryAfterMs }
    },
    async settle(atMs, requestId, tokens) {
      now = atMs
      await store.settle({ requestId, accountId, costNano: 10, tokens, forgive: false })
    },
  }
}

describe('rate buckets in the in-process store', () => {
  test('no 60-second span past a limit; refusals and Retry-After as the buckets in view say', async () => {
    let refused = 0
    let answered = 0
    for (const seed of [1, 2, 3]) {
      const result = await run(memory(), seed)
      refused += check(result)
      answered += result.answers.length
    }
    // The traffic presses the limits: a good part of it is refused, and a good part admitted.
    expect(refused).toBeGreaterThan(answered / 4)
    expect(refused).toBeLessThan((answered * 3) / 4)
  })
})

describeWith('redis', 'rate buckets in the Redis scripts', () => {
  const keyPrefix = `${uniqueName('test:')}:`
  let redis: Redis & { decideAt(...args: (string | number)[]): Promise<unknown[]> }

  beforeAll(async () => {
    const dir = join(import.meta.dir, '../../../../proxy/stores/admission/lua')
    const files = ['lib.lua', 'admit.lua', 'settle.lua', 'release.lua', 'lease.lua', 'decide.lua']
    const parts = await Promise.all(files.map((file) => Bun.file(join(dir, file)).text()))
    const decide = parts.pop()!
    // decide.lua reads Redis's clock and refuses a call past its first argument; here the first
    // argument is the time itself.
    const clocked = decide.replace('local now = now_ms()', 'local now = tonumber(ARGV[1])')
    expect(clocked).not.toBe(decide)
    redis = new Redis(redisUrl!, { keyPrefix }) as typeof redis
    redis.defineCommand('decideAt', { numberOfKeys: 3, lua: [...parts, clocked].join('\n') })
  })
  afterAll(async () => {
    redis.disconnect()
    await deleteRedisKeys(keyPrefix)
  })

  function scripts(): Clocked {
    const accountId = uniqueName('acct_')
    const keys = [
      redisKeys.state(accountId),
      redisKeys.holds(accountId),
      redisKeys.outbox(accountId),
    ]
    const seeded = redis.hset(keys[0]!, 'a', `${1e12}|0|0|0|0`)
    return {
      async admit(atMs, requestId, keyId, tokens) {
        await seeded
        const [reply] = (await redis.decideAt(
          ...keys,
          atMs,
          'admit',
          requestId,
          keyId,
          1_000,
          tokens,
          ...limitArguments(keyLimits, accountLimits),
          60_000,
          '',
          0,
          -1,
        )) as unknown[][]
        if (reply![0] === 'ok') return { ok: true }
        if (reply![0] !== 'rate') throw new Error(`refused: ${reply![0]}`)
        return { ok: false, limit: String(reply![1]), retryAfterMs: Number(reply![3]) }
      },
      async settle(atMs, requestId, tokens) {
        await redis.decideAt(...keys, atMs, 'settle', requestId, 10, tokens, 0, '')
      },
    }
  }

  test('the same decisions as the in-process store, and no 60-second span past a limit', async () => {
    for (const seed of [1, 2, 3]) {
      const fromRedis = await run(scripts(), seed)
      const fromMemory = await run(memory(), seed)
      expect(fromRedis.answers).toEqual(fromMemory.answers)
      check(fromRedis)
    }
  })

  test('records written before rate buckets keep their spend, holds and free requests', async () => {
    const store = await createRedisStore({ url: redisUrl!, keyPrefix, timeoutMs: 2_000 })
    try {
      const accountId = uniqueName('acct_')
      const now = Date.now()
      const day = Math.floor(now / 86_400_000)
      const date = new Date(now)
      const month = date.getUTCFullYear() * 12 + date.getUTCMonth()
      const minute = Math.floor(now / 60_000)
      // bal|held|conc|rw|rc|rp|tc|tp|fd|fc and held|conc|rw|rc|rp|tc|tp|dw|ds|mw|ms, as once written.
      await redis.hset(
        redisKeys.state(accountId),
        'a',
        `5000000|0|0|${minute}|1|2|10|20|${day}|3`,
        'k:key_a',
        `0|0|${minute}|1|2|10|20|${day}|700|${month}|900`,
      )
      const snapshot = await store.snapshot(accountId)
      expect(snapshot).toMatchObject({ balanceNano: 5_000_000, freeUsedToday: 3 })
      expect(snapshot.keys).toEqual([
        { keyId: 'key_a', heldNano: 0, inFlight: 0, daySpentNano: 700, monthSpentNano: 900 },
      ])
      const input = (rpm: number, dailyNano: number): AdmitInput => ({
        requestId: uniqueName('req_'),
        accountId,
        keyId: 'key_a',
        holdNano: 100,
        tokens: 1,
        keyLimits: { rpm, tpm: 0, concurrency: 0, dailyNano, monthlyNano: 0 },
        accountLimits: { rpm: 0, tpm: 0, concurrency: 0 },
      })
      // The day's spend of 700 still counts against a daily cap of 750…
      expect(await store.admit(input(0, 750))).toMatchObject({ ok: false, reason: 'spend' })
      // …and both minutes' 3 requests against 4 a minute.
      expect(await store.admit(input(4, 0))).toMatchObject({ ok: true })
      expect(await store.admit(input(4, 0))).toMatchObject({ ok: false, limit: 'key_rpm' })
    } finally {
      await store.close()
    }
  })

  test('a credit to an account record written before rate buckets keeps its requests per minute', async () => {
    const store = await createRedisStore({ url: redisUrl!, keyPrefix, timeoutMs: 2_000 })
    try {
      const accountId = uniqueName('acct_')
      const minute = Math.floor(Date.now() / 60_000)
      await redis.hset(redisKeys.state(accountId), 'a', `5000000|0|0|${minute}|1|2|10|20|0|0`)
      expect(await store.credit(accountId, uniqueName('credit_'), 1_000)).toMatchObject({
        status: 'applied',
        availableNano: 5_001_000,
      })
      const input = (): AdmitInput => ({
        requestId: uniqueName('req_'),
        accountId,
        keyId: 'key_a',
        holdNano: 100,
        tokens: 1,
        keyLimits: { rpm: 0, tpm: 0, concurrency: 0, dailyNano: 0, monthlyNano: 0 },
        accountLimits: { rpm: 4, tpm: 0, concurrency: 0 },
      })
      // Both minutes' 3 requests still count against 4 a minute.
      expect(await store.admit(input())).toMatchObject({ ok: true })
      expect(await store.admit(input())).toMatchObject({ ok: false, limit: 'account_rpm' })
    } finally {
      await store.close()
    }
  })
})
