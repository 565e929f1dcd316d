// Admission leases on Redis: several stores stand for several processes sharing one Redis. Leases take
// the calls off the request path, and money and limits stay exact: nothing is admitted past the
// balance or a limit, every charge reaches the balance and the outbox, and a lease whose process stops
// returns what it held at its deadline.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { LeasedAdmissionStore } from '../../../../proxy/stores/admission/leased-store.ts'
import type { Lease } from '../../../../proxy/stores/admission/lease.ts'
import {
  createRedisStore,
  type RedisAdmissionStore,
} from '../../../../proxy/stores/admission/redis-store.ts'
import { redisKeys } from '../../../../proxy/stores/admission/redis-keys.ts'
import type { AdmitInput } from '../../../../proxy/stores/admission/store.ts'
import { BUCKET_MS } from '../../../../proxy/stores/admission/windows.ts'
import { deleteRedisKeys, describeWith, redisUrl, uniqueName } from '../../../helpers/services.ts'

const noKeyLimits = { rpm: 0, tpm: 0, concurrency: 0, dailyNano: 0, monthlyNano: 0 }
const noAccountLimits = { rpm: 0, tpm: 0, concurrency: 0 }
const HOLD = 1_000

describeWith('redis', 'admission leases', () => {
  const keyPrefix = `${uniqueName('test:')}:`
  const opened: LeasedAdmissionStore[] = []
  let calls = 0

  /** A store as one process has it; `ttlMs` short for the expiry tests. */
  async function processStore(ttlMs = 30_000): Promise<LeasedAdmissionStore> {
    const inner: RedisAdmissionStore = await createRedisStore({
      url: redisUrl!,
      keyPrefix,
      timeoutMs: 2_000,
      holdDeadlineMs: 60_000,
    })
    const decide = inner.decide.bind(inner)
    inner.decide = (accountId, args) => {
      calls += 1
      return decide(accountId, args)
    }
    const store = new LeasedAdmissionStore(inner, { intervalMs: 5, ttlMs })
    opened.push(store)
    return store
  }

  let store: LeasedAdmissionStore
  beforeAll(async () => {
    store = await processStore()
  })
  afterAll(async () => {
    for (const each of opened) await each.close().catch(() => {})
    await deleteRedisKeys(keyPrefix)
  })

  let counter = 0
  const input = (accountId: string, overrides: Partial<AdmitInput> = {}): AdmitInput => ({
    requestId: `req_${++counter}`,
    accountId,
    keyId: 'key_a',
    holdNano: HOLD,
    tokens: 10,
    keyLimits: noKeyLimits,
    accountLimits: noAccountLimits,
    ...overrides,
  })
  async function account(balanceNano: number): Promise<string> {
    const id = uniqueName('acct_')
    await store.seed(id, { balanceNano, recentCreditIds: [], keySpend: [], guardrailSpend: [] })
    return id
  }
  /** Admits and settles `count` requests one after another; returns what was charged. */
  async function run(target: LeasedAdmissionStore, accountId: string, count: number) {
    let charged = 0
    for (let i = 0; i < count; i++) {
      const request = input(accountId)
      const admitted = await target.admit(request)
      if (!admitted.ok) throw new Error(`refused: ${JSON.stringify(admitted)}`)
      const result = await target.settle({
        requestId: request.requestId,
        accountId,
        costNano: 100 + (i % 7) * 50,
        tokens: 5,
        forgive: false,
      })
      if (result.status === 'settled') charged += result.chargedNano
    }
    return charged
  }
  /** Waits until every lease of the account is given back (they are, once idle for a second). */
  async function settled(accountId: string) {
    for (let attempt = 0; attempt < 60; attempt++) {
      const snapshot = await store.inner.snapshot(accountId)
      if (snapshot.heldNano === 0 && snapshot.inFlight === 0) return snapshot
      await Bun.sleep(100)
    }
    return store.inner.snapshot(accountId)
  }

  test('a well-funded key is admitted and settled in memory once its lease is granted', async () => {
    const accountId = await account(1_000_000_000_000)
    await run(store, accountId, 50)
    await Bun.sleep(20)
    const before = calls
    const charged = await run(store, accountId, 1_000)
    // A call per round (every 5 ms) at most, not two per request.
    expect(calls - before).toBeLessThan(200)
    const held = await store.inner.snapshot(accountId)
    expect(held.heldNano).toBeGreaterThan(0)

    const snapshot = await settled(accountId)
    expect(snapshot).toMatchObject({ heldNano: 0, inFlight: 0 })
    const pending = (await store.pendingLedger(0)).filter((entry) => entry.accountId === accountId)
    const total = pending.reduce((sum, entry) => sum + entry.chargedNano, 0)
    expect(snapshot.balanceNano).toBe(1_000_000_000_000 - total)
    expect(total).toBeGreaterThanOrEqual(charged)
    expect(snapshot.keys.find((key) => key.keyId === 'key_a')?.daySpentNano).toBe(total)
  })

  test('the account read through the process that holds its lease: unused room and slots are not held, charges not yet sent are charged', async () => {
    const accountId = await account(1_000_000_000_000)
    await run(store, accountId, 50)
    const open = input(accountId)
    expect((await store.admit(open)).ok).toBe(true)
    const raw = await store.inner.snapshot(accountId)
    const seen = await store.snapshot(accountId)
    // Redis holds the lease whole; through it, only the request still open is held and in flight.
    expect(raw.heldNano).toBeGreaterThan(HOLD)
    expect(raw.inFlight).toBeGreaterThan(1)
    expect(seen).toMatchObject({ heldNano: HOLD, inFlight: 1 })
    expect(seen.keys.find((key) => key.keyId === 'key_a')).toMatchObject({
      heldNano: HOLD,
      inFlight: 1,
    })
    // What the requests were charged counts at once, whether or not Redis has it yet.
    const pending = async () =>
      (await store.pendingLedger(0))
        .filter((entry) => entry.accountId === accountId)
        .reduce((sum, entry) => sum + entry.chargedNano, 0)
    const charged = 1_000_000_000_000 - seen.balanceNano
    expect(charged).toBeGreaterThanOrEqual(await pending())
    expect(seen.keys.find((key) => key.keyId === 'key_a')!.daySpentNano).toBe(charged)
    expect(seen.availableNano).toBe(seen.balanceNano - HOLD)
    await store.settle({
      requestId: open.requestId,
      accountId,
      costNano: 100,
      tokens: 5,
      forgive: false,
    })
    const after = await settled(accountId)
    expect(after).toMatchObject({
      heldNano: 0,
      inFlight: 0,
      balanceNano: 1_000_000_000_000 - charged - 100,
    })
    expect(await pending()).toBe(charged + 100)
  })

  test('four processes never admit past the balance; near its end every request is decided in Redis, exactly', async () => {
    const stores = [store, await processStore(), await processStore(), await processStore()]
    // Far from the end: leases are granted, and the sum admitted stays within the balance.
    const large = await account(2_000 * HOLD)
    const admittedLarge = await Promise.all(
      stores.map(async (each) => {
        const results = await Promise.all(
          Array.from({ length: 1_000 }, () => each.admit(input(large))),
        )
        return results.filter((result) => result.ok).length
      }),
    )
    const totalLarge = admittedLarge.reduce((sum, n) => sum + n, 0)
    expect(totalLarge).toBeLessThanOrEqual(2_000)
    expect(totalLarge).toBeGreaterThan(1_500)

    // Near the end: no lease grows, so exactly what the balance affords is admitted.
    const small = await account(100 * HOLD)
    const results = await Promise.all(
      stores.flatMap((each) => Array.from({ length: 125 }, () => each.admit(input(small)))),
    )
    expect(results.filter((result) => result.ok)).toHaveLength(100)
    expect(results.filter((result) => !result.ok && result.reason === 'credits')).toHaveLength(400)
  })

  test('under a concurrency limit far above the traffic, leases still form, with the slots the limit can spare', async () => {
    const accountId = await account(1_000_000_000_000)
    const accountLimits = { ...noAccountLimits, concurrency: 256 }
    /** Rounds of 64 requests in flight at once, each admitted and then settled. */
    const rounds = async (count: number) => {
      for (let round = 0; round < count; round++) {
        const requests = Array.from({ length: 64 }, () => input(accountId, { accountLimits }))
        const results = await Promise.all(requests.map((request) => store.admit(request)))
        expect(results.every((result) => result.ok)).toBe(true)
        await Promise.all(
          requests.map((request) =>
            store.settle({
              requestId: request.requestId,
              accountId,
              costNano: 100,
              tokens: 5,
              forgive: false,
            }),
          ),
        )
      }
    }
    await rounds(10)
    await Bun.sleep(20)
    const before = calls
    await rounds(20)
    // 1,280 admissions and settles: two calls each without a lease.
    expect(calls - before).toBeLessThan(400)
    const leaseOf = (held: Record<string, string>) =>
      Object.entries(held).find(([id]) => id.startsWith('lease:'))?.[1]
    const holds = await store.inner.redis.hgetall(redisKeys.holds(accountId))
    expect(leaseOf(holds)).toBeDefined()
  })

  test('a key’s concurrency limit across four processes with leases: never more in flight than the limit', async () => {
    const stores = [store, ...opened.slice(1, 4)]
    const accountId = await account(1_000_000_000_000)
    const keyLimits = { ...noKeyLimits, concurrency: 40 }
    let open = 0
    let peak = 0
    await Promise.all(
      stores.map(async (each) => {
        for (let round = 0; round < 20; round++) {
          const requests = Array.from({ length: 20 }, () =>
            input(accountId, { keyId: 'key_conc', keyLimits }),
          )
          const results = await Promise.all(
            requests.map(async (request) => {
              const result = await each.admit(request)
              if (result.ok) peak = Math.max(peak, ++open)
              return result
            }),
          )
          await Bun.sleep(1)
          await Promise.all(
            requests.map((request, index) => {
              if (!results[index]!.ok) return
              open -= 1
              return each.settle({
                requestId: request.requestId,
                accountId,
                costNano: 100,
                tokens: 5,
                forgive: false,
              })
            }),
          )
        }
      }),
    )
    expect(peak).toBeLessThanOrEqual(40)
    expect(peak).toBeGreaterThan(20)
  })

  test('requests per minute across four processes: no more than the limit is admitted', async () => {
    const stores = [store, ...opened.slice(1, 4)]
    for (const limit of [60, 3_000]) {
      const accountId = await account(1_000_000_000_000)
      const keyLimits = { ...noKeyLimits, rpm: limit }
      const admitted = await Promise.all(
        stores.map(async (each) => {
          let ok = 0
          for (let round = 0; round < 10; round++) {
            const results = await Promise.all(
              Array.from({ length: 150 }, () =>
                each.admit(input(accountId, { keyId: `key_rpm_${limit}`, keyLimits })),
              ),
            )
            ok += results.filter((result) => result.ok).length
          }
          return ok
        }),
      )
      const total = admitted.reduce((sum, n) => sum + n, 0)
      expect(total).toBeLessThanOrEqual(limit)
      if (limit === 60) expect(total).toBe(60)
    }
  })

  test('under a rate limit, what a lease admits counts in the two-second bucket of the admission', async () => {
    const accountId = await account(1_000_000_000_000)
    // A limit far above the traffic: leases grow to bursts of 100, and hold up to twice that unused.
    const keyLimits = { ...noKeyLimits, rpm: 10_000_000 }
    const redis = store.inner.redis
    const sentAt = Date.now()
    const offsetMs = (await store.inner.serverTime()) - Math.round((sentAt + Date.now()) / 2)
    const at: number[] = []
    // Bursts across a few bucket boundaries.
    const until = Date.now() + offsetMs + 3 * BUCKET_MS
    while (Date.now() + offsetMs < until) {
      await Promise.all(
        Array.from({ length: 100 }, async () => {
          const request = input(accountId, { keyId: 'key_buckets', keyLimits })
          const result = await store.admit(request)
          if (!result.ok) throw new Error(`refused: ${JSON.stringify(result)}`)
          at.push(Date.now() + offsetMs)
          await store.settle({
            requestId: request.requestId,
            accountId,
            costNano: 100,
            tokens: 5,
            forgive: false,
          })
        }),
      )
      await Bun.sleep(3)
    }
    await settled(accountId)
    // The key's requests per minute: its latest bucket, then the counts of that bucket and those before.
    const record = (await redis.hget(redisKeys.state(accountId), 'kr:key_buckets'))!
      .split('|')
      .map(Number)
    const latest = record[0]!
    const counted = (bucket: number) => record[1 + latest - bucket] ?? 0
    const near = (time: number) => Math.abs(time - Math.round(time / BUCKET_MS) * BUCKET_MS) < 5
    const buckets = [...new Set(at.map((time) => Math.floor(time / BUCKET_MS)))]
    expect(buckets.length).toBeGreaterThanOrEqual(2)
    for (const bucket of buckets) {
      const admitted = at.filter((time) => Math.floor(time / BUCKET_MS) === bucket)
      const unsure = admitted.filter(near).length
      // Never fewer than the admissions in the bucket: a request granted before a bucket ended was not
      // used after it (it would count in a bucket that leaves the view early).
      expect(counted(bucket)).toBeGreaterThanOrEqual(admitted.length - unsure)
    }
    // And nothing counted for nothing but what leases held when their bucket ended.
    const total = buckets.reduce((sum, bucket) => sum + counted(bucket), 0)
    expect(total).toBeGreaterThanOrEqual(at.length)
    expect(total).toBeLessThan(at.length + 600)
  }, 30_000)

  test('a lease admits nothing more once an adjustment took the balance below what is held', async () => {
    const accountId = await account(1_000_000_000)
    // A lease grows in this process under steady use.
    for (let round = 0; round < 20; round++) {
      await run(store, accountId, 20)
      await Bun.sleep(6)
    }
    expect((await store.inner.snapshot(accountId)).heldNano).toBeGreaterThan(0)
    // Another process books a reversal of more than the balance (a chargeback).
    const other = opened[1]!
    const { balanceNano } = await other.inner.snapshot(accountId)
    const adjustmentNano = -balanceNano - 1_000
    await other.credit(accountId, uniqueName('adj_'), adjustmentNano)
    // The lease has heard of it once a round's answer shows the account's other holds above its balance.
    const leases = (store as unknown as { leases: Map<string, Lease> }).leases
    const heard = () =>
      [...leases.values()].some(
        (lease) => lease.input.accountId === accountId && lease.sharedNano < 0,
      )
    let admittedAfter = 0
    let everHeard = false
    for (let i = 0; i < 200; i++) {
      const request = input(accountId)
      everHeard ||= heard()
      const result = await store.admit(request)
      if (result.ok) {
        if (everHeard) admittedAfter += 1
        await store.settle({
          requestId: request.requestId,
          accountId,
          costNano: 500,
          tokens: 5,
          forgive: false,
        })
      }
      await Bun.sleep(1)
    }
    // Only requests of the rounds before the lease heard of it; before, the lease's whole room.
    expect(everHeard).toBe(true)
    expect(admittedAfter).toBe(0)
    const snapshot = await settled(accountId)
    const pending = (await store.pendingLedger(0)).filter((entry) => entry.accountId === accountId)
    expect(snapshot).toMatchObject({ heldNano: 0, inFlight: 0 })
    expect(snapshot.balanceNano).toBe(
      1_000_000_000 + adjustmentNano - pending.reduce((sum, entry) => sum + entry.chargedNano, 0),
    )
  })

  test('a process that stops: its lease expires at its deadline and returns what it held', async () => {
    const stopped = await processStore(300)
    const accountId = await account(1_000_000_000_000)
    await run(stopped, accountId, 50)
    await Bun.sleep(20)
    await run(stopped, accountId, 100)
    await Bun.sleep(50)
    // The process stops without giving its lease back (as on SIGKILL): no more rounds.
    ;(stopped as unknown as { timer: Timer }).timer.unref()
    clearInterval((stopped as unknown as { timer: Timer }).timer)
    opened.splice(opened.indexOf(stopped), 1)
    const held = await store.inner.snapshot(accountId)
    expect(held.heldNano).toBeGreaterThan(0)
    await Bun.sleep(400)
    for (let attempt = 0; attempt < 30; attempt++) {
      await store.sweep()
      if ((await store.inner.snapshot(accountId)).heldNano === 0) break
      await Bun.sleep(100)
    }
    const snapshot = await store.inner.snapshot(accountId)
    expect(snapshot).toMatchObject({ heldNano: 0, inFlight: 0 })
    const pending = (await store.pendingLedger(0)).filter((entry) => entry.accountId === accountId)
    expect(snapshot.balanceNano).toBe(
      1_000_000_000_000 - pending.reduce((sum, entry) => sum + entry.chargedNano, 0),
    )
  })

  test('a lease that expired while its process was paused: its requests are still charged, once, and a new lease starts', async () => {
    const paused = await processStore(300)
    const timer = paused as unknown as { timer: Timer; tickAll(): void }
    const accountId = await account(1_000_000_000_000)
    await run(paused, accountId, 50)
    await Bun.sleep(20)
    const request = input(accountId)
    expect((await paused.admit(request)).ok).toBe(true)
    clearInterval(timer.timer)
    await Bun.sleep(400)
    for (let attempt = 0; attempt < 30; attempt++) {
      await store.sweep()
      if ((await store.inner.snapshot(accountId)).heldNano === 0) break
      await Bun.sleep(100)
    }
    expect((await store.inner.snapshot(accountId)).heldNano).toBe(0)
    // The process wakes up: the request it admitted ends and is charged; the lease is found gone.
    const result = await paused.settle({
      requestId: request.requestId,
      accountId,
      costNano: 700,
      tokens: 5,
      forgive: false,
    })
    expect(result).toMatchObject({ status: 'settled', chargedNano: 700 })
    timer.tickAll()
    await Bun.sleep(50)
    timer.tickAll()
    await run(paused, accountId, 20)
    await paused.close()
    opened.splice(opened.indexOf(paused), 1)
    const snapshot = await store.inner.snapshot(accountId)
    expect(snapshot).toMatchObject({ heldNano: 0, inFlight: 0 })
    const pending = (await store.pendingLedger(0)).filter((entry) => entry.accountId === accountId)
    expect(pending.find((entry) => entry.requestId === request.requestId)?.chargedNano).toBe(700)
    expect(snapshot.balanceNano).toBe(
      1_000_000_000_000 - pending.reduce((sum, entry) => sum + entry.chargedNano, 0),
    )
  })

  /**
   * A process whose first charge call reaches Redis and whose answer comes too late (the call timed out);
   * `beforeLoss` runs between the two. `lost()` counts such calls (one at most).
   */
  async function losingFirstCharge(
    beforeLoss: (accountId: string) => Promise<void> = async () => {},
  ) {
    const flaky = await processStore()
    const decide = flaky.inner.decide.bind(flaky.inner)
    let lost = 0
    flaky.inner.decide = async (accountId, args) => {
      const reply = await decide(accountId, args)
      if (args[0] === 'charge' && lost === 0) {
        lost += 1
        await beforeLoss(accountId)
        throw new Error('Command timed out')
      }
      return reply
    }
    return { flaky, lost: () => lost }
  }

  test('a charge call that Redis applied but did not answer in time is sent again and taken once', async () => {
    const { flaky, lost } = await losingFirstCharge()
    const accountId = await account(1_000_000_000_000)
    const charged = await run(flaky, accountId, 200)
    const snapshot = await settled(accountId)
    expect(lost()).toBe(1)
    const pending = (await store.pendingLedger(0)).filter((entry) => entry.accountId === accountId)
    expect(pending.reduce((sum, entry) => sum + entry.chargedNano, 0)).toBe(charged)
    expect(snapshot.balanceNano).toBe(1_000_000_000_000 - charged)
  })

  test('a decision call that runs after its caller stopped waiting is refused whole', async () => {
    // What the cluster client does after a master died: it sends the call again, perhaps after the store
    // gave up on it and sent the charges again itself.
    const accountId = await account(1_000_000_000_000)
    const before = await store.inner.snapshot(accountId)
    const late = (notAfterMs: number) =>
      store.inner.redis.gwDecide(
        redisKeys.state(accountId),
        redisKeys.holds(accountId),
        redisKeys.outbox(accountId),
        notAfterMs,
        'charge',
        'lease_gone',
        'key_a',
        '',
        1,
        'req_late',
        500,
        0,
        '',
      )
    expect(String(await late(Date.now() - 1_000).catch((error) => error))).toContain('LATE')
    expect(await store.inner.snapshot(accountId)).toEqual(before)
    expect((await late(Date.now() + 5_000))[0]).toEqual(['charged', 1_000_000_000_000 - 500])
    expect((await store.inner.snapshot(accountId)).balanceNano).toBe(1_000_000_000_000 - 500)
  })

  test('a charge sent again after recovery already wrote it to Postgres is still taken once', async () => {
    let recovered = 0
    // Before the process sends the lost call again (a failover, a slow machine), another process's
    // recovery finds its entries old and writes them.
    const { flaky } = await losingFirstCharge(async (accountId) => {
      const orphans = (await store.pendingLedger(0)).filter(
        (entry) => entry.accountId === accountId,
      )
      recovered = orphans.length
      await store.ackRecovered(orphans)
    })
    const accountId = await account(1_000_000_000_000)
    const charged = await run(flaky, accountId, 200)
    const snapshot = await settled(accountId)
    expect(recovered).toBeGreaterThan(0)
    expect(snapshot.balanceNano).toBe(1_000_000_000_000 - charged)
    // Recovered entries stay as marks, not as entries to write again.
    const pending = (await store.pendingLedger(0)).filter((entry) => entry.accountId === accountId)
    expect(pending.reduce((sum, entry) => sum + entry.chargedNano, 0)).toBeLessThan(charged)
  })
})
