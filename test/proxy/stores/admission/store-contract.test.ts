// One contract, two admission stores: everything here holds for the in-process store and for Redis.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { MemoryAdmissionStore } from '../../../../proxy/stores/admission/memory-store.ts'
import { createRedisStore } from '../../../../proxy/stores/admission/redis-store.ts'
import { LeasedAdmissionStore } from '../../../../proxy/stores/admission/leased-store.ts'
import type { KeyLimits } from '../../../../proxy/core/key-record.ts'
import type { AdmissionStore, AdmitInput } from '../../../../proxy/stores/admission/store.ts'
import { deleteRedisKeys, describeWith, redisUrl, uniqueName } from '../../../helpers/services.ts'
import { redisServerBinary } from '../../../helpers/redis-process.ts'
import {
  redisCliBinary,
  startRedisCluster,
  type RedisCluster,
} from '../../../helpers/redis-cluster.ts'

const noKeyLimits: KeyLimits = { rpm: 0, tpm: 0, concurrency: 0, dailyNano: 0, monthlyNano: 0 }
const noAccountLimits = { rpm: 0, tpm: 0, concurrency: 0 }
const SHORT_DEADLINE_MS = 300

type Harness = { store: AdmissionStore; shortStore: AdmissionStore; close(): Promise<void> }

function contract(name: string, open: () => Promise<Harness>) {
  let harness: Harness
  let store: AdmissionStore
  beforeAll(async () => {
    harness = await open()
    store = harness.store
  })
  afterAll(() => harness.close())

  let counter = 0
  const requestId = () => `req_${name}_${++counter}_${Math.random().toString(36).slice(2)}`
  const admitInput = (accountId: string, overrides: Partial<AdmitInput> = {}): AdmitInput => ({
    requestId: requestId(),
    accountId,
    keyId: 'key_a',
    holdNano: 100,
    tokens: 10,
    keyLimits: noKeyLimits,
    accountLimits: noAccountLimits,
    ...overrides,
  })
  async function account(balanceNano: number, target = store): Promise<string> {
    const id = uniqueName('acct_')
    await target.seed(id, { balanceNano, recentCreditIds: [], keySpend: [], guardrailSpend: [] })
    return id
  }

  describe(`${name} admission store`, () => {
    test('an account without loaded state answers cold until it is seeded', async () => {
      const id = uniqueName('acct_')
      expect(await store.admit(admitInput(id))).toEqual({ ok: false, reason: 'cold' })
      expect(
        await store.seed(id, {
          balanceNano: 500,
          recentCreditIds: [],
          keySpend: [],
          guardrailSpend: [],
        }),
      ).toBe(true)
      expect(
        await store.seed(id, {
          balanceNano: 9_999,
          recentCreditIds: [],
          keySpend: [],
          guardrailSpend: [],
        }),
      ).toBe(false)
      const admitted = await store.admit(admitInput(id))
      expect(admitted).toMatchObject({ ok: true, availableNano: 400 })
    })

    test('a hold larger than the available balance is refused with the balance', async () => {
      const id = await account(100)
      expect(await store.admit(admitInput(id, { holdNano: 101 }))).toEqual({
        ok: false,
        reason: 'credits',
        availableNano: 100,
      })
      expect(await store.admit(admitInput(id, { holdNano: 100 }))).toMatchObject({
        ok: true,
        availableNano: 0,
      })
    })

    test('open holds count against the available balance', async () => {
      const id = await account(100)
      expect((await store.admit(admitInput(id, { holdNano: 60 }))).ok).toBe(true)
      expect(await store.admit(admitInput(id, { holdNano: 60 }))).toEqual({
        ok: false,
        reason: 'credits',
        availableNano: 40,
      })
    })

    test('settle charges the cost, capped at the hold, and writes off the excess', async () => {
      const id = await account(1_000)
      const small = admitInput(id, { holdNano: 300 })
      await store.admit(small)
      expect(
        await store.settle({
          requestId: small.requestId,
          accountId: id,
          costNano: 120,
          tokens: 5,
          forgive: false,
        }),
      ).toEqual({
        status: 'settled',
        chargedNano: 120,
        writtenOffNano: 0,
        availableNano: 880,
        again: false,
      })
      const big = admitInput(id, { holdNano: 200 })
      await store.admit(big)
      expect(
        await store.settle({
          requestId: big.requestId,
          accountId: id,
          costNano: 450,
          tokens: 5,
          forgive: false,
        }),
      ).toMatchObject({
        chargedNano: 200,
        writtenOffNano: 250,
        availableNano: 680,
      })
      const snapshot = await store.snapshot(id)
      expect(snapshot).toMatchObject({
        loaded: true,
        balanceNano: 680,
        heldNano: 0,
        availableNano: 680,
        inFlight: 0,
      })
    })

    test('settling twice charges once: the first result while the charge is in the outbox, nothing after', async () => {
      const id = await account(1_000)
      const input = admitInput(id, { holdNano: 500 })
      await store.admit(input)
      const settle = {
        requestId: input.requestId,
        accountId: id,
        costNano: 70,
        tokens: 3,
        forgive: false,
      }
      await store.settle(settle)
      expect(await store.settle({ ...settle, costNano: 400 })).toMatchObject({
        status: 'settled',
        chargedNano: 70,
        again: true,
      })
      await store.ackLedger([{ accountId: id, requestId: input.requestId }])
      expect(await store.settle({ ...settle, costNano: 400 })).toEqual({
        status: 'missing',
        availableNano: 930,
      })
      expect(await store.release(id, input.requestId)).toEqual({
        status: 'missing',
        availableNano: 930,
      })
      expect((await store.snapshot(id)).balanceNano).toBe(930)
    })

    test('a forgiven settle charges nothing and records the whole cost as written off', async () => {
      const id = await account(1_000)
      const input = admitInput(id, { holdNano: 500 })
      await store.admit(input)
      expect(
        await store.settle({
          requestId: input.requestId,
          accountId: id,
          costNano: 90,
          tokens: 3,
          forgive: true,
        }),
      ).toMatchObject({
        chargedNano: 0,
        writtenOffNano: 90,
        availableNano: 1_000,
      })
    })

    test('release returns the hold, and a settle after it charges nothing', async () => {
      const id = await account(1_000)
      const input = admitInput(id, { holdNano: 400 })
      await store.admit(input)
      expect(await store.release(id, input.requestId)).toEqual({
        status: 'released',
        availableNano: 1_000,
      })
      expect(await store.release(id, input.requestId)).toEqual({
        status: 'missing',
        availableNano: 1_000,
      })
      expect(
        await store.settle({
          requestId: input.requestId,
          accountId: id,
          costNano: 50,
          tokens: 1,
          forgive: false,
        }),
      ).toEqual({
        status: 'missing',
        availableNano: 1_000,
      })
      expect((await store.snapshot(id)).balanceNano).toBe(1_000)
    })

    test('a settle or release for an unknown request changes nothing', async () => {
      const id = await account(1_000)
      expect(
        await store.settle({
          requestId: 'req_unknown',
          accountId: id,
          costNano: 50,
          tokens: 1,
          forgive: false,
        }),
      ).toEqual({
        status: 'missing',
        availableNano: 1_000,
      })
      expect(await store.release(id, 'req_unknown')).toEqual({
        status: 'missing',
        availableNano: 1_000,
      })
    })

    test('a request id can hold only once at a time', async () => {
      const id = await account(1_000)
      const input = admitInput(id)
      await store.admit(input)
      expect(await store.admit(input)).toEqual({ ok: false, reason: 'duplicate' })
    })

    test('key and account concurrency count open holds and free on settle', async () => {
      const id = await account(10_000)
      const keyLimits = { ...noKeyLimits, concurrency: 2 }
      const first = admitInput(id, { keyLimits })
      await store.admit(first)
      await store.admit(admitInput(id, { keyLimits }))
      expect(await store.admit(admitInput(id, { keyLimits }))).toMatchObject({
        ok: false,
        reason: 'rate',
        limit: 'key_concurrency',
        value: 2,
      })
      // Another key of the account is held by the account limit instead.
      const accountLimits = { ...noAccountLimits, concurrency: 2 }
      expect(await store.admit(admitInput(id, { keyId: 'key_b', accountLimits }))).toMatchObject({
        limit: 'account_concurrency',
      })
      await store.settle({
        requestId: first.requestId,
        accountId: id,
        costNano: 1,
        tokens: 1,
        forgive: false,
      })
      expect((await store.admit(admitInput(id, { keyLimits }))).ok).toBe(true)
    })

    test('requests per minute refuse the request past the limit with a retry delay', async () => {
      const id = await account(10_000)
      const keyLimits = { ...noKeyLimits, rpm: 3 }
      for (let i = 0; i < 3; i++)
        expect((await store.admit(admitInput(id, { keyLimits }))).ok).toBe(true)
      const refused = await store.admit(admitInput(id, { keyLimits }))
      expect(refused).toMatchObject({ ok: false, reason: 'rate', limit: 'key_rpm', value: 3 })
      if (refused.ok || refused.reason !== 'rate') throw new Error('expected a rate refusal')
      expect(refused.retryAfterMs).toBeGreaterThanOrEqual(1_000)
      expect(refused.retryAfterMs).toBeLessThanOrEqual(120_000)
      const accountLimits = { ...noAccountLimits, rpm: 3 }
      expect(await store.admit(admitInput(id, { keyId: 'key_b', accountLimits }))).toMatchObject({
        limit: 'account_rpm',
      })
    })

    test('tokens per minute count the estimate until settle corrects it', async () => {
      const id = await account(10_000)
      const keyLimits = { ...noKeyLimits, tpm: 1_000 }
      const big = admitInput(id, { keyLimits, tokens: 900 })
      await store.admit(big)
      expect(await store.admit(admitInput(id, { keyLimits, tokens: 200 }))).toMatchObject({
        reason: 'rate',
        limit: 'key_tpm',
      })
      await store.settle({
        requestId: big.requestId,
        accountId: id,
        costNano: 1,
        tokens: 100,
        forgive: false,
      })
      expect((await store.admit(admitInput(id, { keyLimits, tokens: 200 }))).ok).toBe(true)
      expect(await store.admit(admitInput(id, { keyLimits, tokens: 5_000 }))).toMatchObject({
        reason: 'rate',
        limit: 'key_tpm',
      })
    })

    test('the daily cap counts spend and open holds and resets at the next UTC midnight', async () => {
      const id = await account(100_000)
      const keyLimits = { ...noKeyLimits, dailyNano: 1_000 }
      const first = admitInput(id, { keyLimits, holdNano: 600 })
      await store.admit(first)
      const refused = await store.admit(admitInput(id, { keyLimits, holdNano: 500 }))
      const midnight = (Math.floor(Date.now() / 86_400_000) + 1) * 86_400_000
      expect(refused).toMatchObject({
        ok: false,
        reason: 'spend',
        window: 'daily',
        capNano: 1_000,
        resetAtMs: midnight,
      })
      await store.settle({
        requestId: first.requestId,
        accountId: id,
        costNano: 400,
        tokens: 1,
        forgive: false,
      })
      expect((await store.admit(admitInput(id, { keyLimits, holdNano: 600 }))).ok).toBe(true)
      expect(await store.admit(admitInput(id, { keyLimits, holdNano: 1 }))).toMatchObject({
        reason: 'spend',
        window: 'daily',
      })
      const snapshot = await store.snapshot(id)
      expect(snapshot.keys.find((key) => key.keyId === 'key_a')).toMatchObject({
        daySpentNano: 400,
        monthSpentNano: 400,
        heldNano: 600,
        inFlight: 1,
      })
    })

    test('the monthly cap resets on the first day of the next UTC month', async () => {
      const id = await account(100_000)
      const keyLimits = { ...noKeyLimits, monthlyNano: 500 }
      const refused = await store.admit(admitInput(id, { keyLimits, holdNano: 501 }))
      const now = new Date()
      expect(refused).toMatchObject({
        reason: 'spend',
        window: 'monthly',
        resetAtMs: Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1),
      })
    })

    test('spend loaded from Postgres counts against the caps', async () => {
      const id = uniqueName('acct_')
      await store.seed(id, {
        balanceNano: 100_000,
        recentCreditIds: [],
        keySpend: [{ keyId: 'key_a', daySpentNano: 900, monthSpentNano: 900 }],
        guardrailSpend: [],
      })
      expect(
        await store.admit(
          admitInput(id, { keyLimits: { ...noKeyLimits, dailyNano: 1_000 }, holdNano: 200 }),
        ),
      ).toMatchObject({ reason: 'spend' })
    })

    test('a guardrail budget counts spend and open holds of every key assigned to it', async () => {
      const id = uniqueName('acct_')
      await store.seed(id, {
        balanceNano: 100_000,
        recentCreditIds: [],
        keySpend: [],
        guardrailSpend: [{ guardrailId: 'gr_1', monthSpentNano: 300 }],
      })
      const guardrail = { id: 'gr_1', budgetNano: 1_000 }
      const first = admitInput(id, { keyId: 'key_a', guardrail, holdNano: 500 })
      expect((await store.admit(first)).ok).toBe(true)
      const now = new Date()
      expect(
        await store.admit(admitInput(id, { keyId: 'key_b', guardrail, holdNano: 201 })),
      ).toMatchObject({
        ok: false,
        reason: 'spend',
        window: 'guardrail',
        capNano: 1_000,
        resetAtMs: Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1),
      })
      // Another guardrail, and a key without one, are not affected.
      expect(
        (
          await store.admit(
            admitInput(id, {
              keyId: 'key_b',
              guardrail: { id: 'gr_2', budgetNano: 1_000 },
              holdNano: 900,
            }),
          )
        ).ok,
      ).toBe(true)
      expect((await store.admit(admitInput(id, { keyId: 'key_c', holdNano: 900 }))).ok).toBe(true)
      await store.settle({
        requestId: first.requestId,
        accountId: id,
        costNano: 100,
        tokens: 1,
        forgive: false,
      })
      expect(
        (await store.admit(admitInput(id, { keyId: 'key_b', guardrail, holdNano: 600 }))).ok,
      ).toBe(true)
      const snapshot = await store.snapshot(id)
      expect(snapshot.guardrails.find((g) => g.guardrailId === 'gr_1')).toEqual({
        guardrailId: 'gr_1',
        heldNano: 600,
        monthSpentNano: 400,
      })
    })

    test('the free allowance is shared by the keys of an account; a released request gives its place back', async () => {
      const id = await account(0)
      const free = (keyId: string) => admitInput(id, { keyId, holdNano: 0, freePerDay: 2 })
      const first = free('key_a')
      expect((await store.admit(first)).ok).toBe(true)
      expect((await store.admit(free('key_b'))).ok).toBe(true)
      const refused = await store.admit(free('key_c'))
      const midnight = (Math.floor(Date.now() / 86_400_000) + 1) * 86_400_000
      expect(refused).toMatchObject({ ok: false, reason: 'free', allowance: 2 })
      if (!refused.ok && refused.reason === 'free') {
        expect(refused.retryAfterMs).toBeGreaterThan(0)
        expect(refused.retryAfterMs).toBeLessThanOrEqual(midnight - Date.now() + 1_000)
      }
      // Paid requests do not count against it.
      expect((await store.admit(admitInput(id, { holdNano: 0 }))).ok).toBe(true)
      await store.release(id, first.requestId)
      expect((await store.snapshot(id)).freeUsedToday).toBe(1)
      expect((await store.admit(free('key_c'))).ok).toBe(true)
      expect(await store.admit(free('key_a'))).toMatchObject({ reason: 'free' })
    })

    test('credits apply once per ledger entry and wait for a seed on a cold account', async () => {
      const cold = uniqueName('acct_')
      expect(await store.credit(cold, 'ledger_1', 500)).toEqual({ status: 'cold' })
      const id = uniqueName('acct_')
      await store.seed(id, {
        balanceNano: 1_000,
        recentCreditIds: ['ledger_seeded'],
        keySpend: [],
        guardrailSpend: [],
      })
      expect(await store.credit(id, 'ledger_seeded', 500)).toEqual({
        status: 'again',
        availableNano: 1_000,
      })
      expect(await store.credit(id, 'ledger_2', 500)).toEqual({
        status: 'applied',
        availableNano: 1_500,
      })
      expect(await store.credit(id, 'ledger_2', 500)).toEqual({
        status: 'again',
        availableNano: 1_500,
      })
    })

    test('charges wait in the outbox until acknowledged', async () => {
      const id = await account(1_000)
      const input = admitInput(id, { holdNano: 300 })
      await store.admit(input)
      await store.settle({
        requestId: input.requestId,
        accountId: id,
        costNano: 40,
        tokens: 1,
        forgive: false,
      })
      const pending = (await store.pendingLedger(0)).filter((entry) => entry.accountId === id)
      expect(pending).toEqual([
        {
          requestId: input.requestId,
          accountId: id,
          keyId: 'key_a',
          chargedNano: 40,
          writtenOffNano: 0,
          atMs: expect.any(Number),
        },
      ])
      expect((await store.pendingLedger(60_000)).filter((entry) => entry.accountId === id)).toEqual(
        [],
      )
      await store.ackLedger(pending)
      expect((await store.pendingLedger(0)).filter((entry) => entry.accountId === id)).toEqual([])
    })

    test('the sweep expires holds past their deadline, and a late settle charges nothing', async () => {
      const short = harness.shortStore
      const id = await account(1_000, short)
      const expiring = admitInput(id, { holdNano: 400 })
      const extended = admitInput(id, { holdNano: 100 })
      await short.admit(expiring)
      await short.admit(extended)
      await Bun.sleep(SHORT_DEADLINE_MS / 2)
      expect(await short.extend(id, [extended.requestId])).toBe(1)
      await Bun.sleep(SHORT_DEADLINE_MS / 2 + 100)
      // Extended again as a running request's keeps it, so a slow sweep below cannot outlast it.
      expect(await short.extend(id, [extended.requestId])).toBe(1)
      const { expired } = await sweepUntil(short, expiring.requestId)
      expect(expired).toContainEqual({ accountId: id, requestId: expiring.requestId })
      expect(expired).not.toContainEqual({ accountId: id, requestId: extended.requestId })
      expect(
        await short.settle({
          requestId: expiring.requestId,
          accountId: id,
          costNano: 50,
          tokens: 1,
          forgive: false,
        }),
      ).toEqual({
        status: 'missing',
        availableNano: 900,
      })
      expect(await short.snapshot(id)).toMatchObject({
        balanceNano: 1_000,
        heldNano: 100,
        inFlight: 1,
      })
    })

    test('500 concurrent admissions against a balance for exactly 100 holds admit exactly 100', async () => {
      const id = await account(100 * 250)
      const inputs = Array.from({ length: 500 }, (_, i) =>
        admitInput(id, { holdNano: 250, keyId: `key_${i % 7}` }),
      )
      const results = await Promise.all(inputs.map((input) => store.admit(input)))
      const admitted = inputs.filter((_, i) => results[i]!.ok)
      expect(admitted).toHaveLength(100)
      expect(results.filter((result) => !result.ok && result.reason === 'credits')).toHaveLength(
        400,
      )
      await Promise.all(
        admitted.map((input, i) =>
          store.settle({
            requestId: input.requestId,
            accountId: id,
            costNano: i % 2 ? 250 : 100,
            tokens: 1,
            forgive: false,
          }),
        ),
      )
      const snapshot = await store.snapshot(id)
      expect(snapshot).toMatchObject({
        heldNano: 0,
        inFlight: 0,
        balanceNano: 100 * 250 - 50 * 250 - 50 * 100,
      })
      const pending = (await store.pendingLedger(0)).filter((entry) => entry.accountId === id)
      expect(pending.reduce((sum, entry) => sum + entry.chargedNano, 0)).toBe(50 * 250 + 50 * 100)
    })
  })
}

/** The Redis sweep runs one sweeper at a time (a short lock); retry until this test's hold is seen. */
async function sweepUntil(store: AdmissionStore, requestId: string) {
  for (let attempt = 0; attempt < 30; attempt++) {
    const result = await store.sweep()
    if (result.expired.some((entry) => entry.requestId === requestId)) return result
    await Bun.sleep(200)
  }
  return { expired: [] }
}

describe('in-process', () => {
  contract('memory', async () => ({
    store: new MemoryAdmissionStore(),
    shortStore: new MemoryAdmissionStore(Date.now, SHORT_DEADLINE_MS),
    close: async () => {},
  }))
})

/** Two stores on one key prefix (one with short hold deadlines), leased or not. */
async function redisHarness(leased: boolean, url = redisUrl!): Promise<Harness> {
  const keyPrefix = `${uniqueName('test:')}:`
  const options = { url, keyPrefix, timeoutMs: 2_000 }
  const open = async (holdDeadlineMs?: number): Promise<AdmissionStore> => {
    const store = await createRedisStore({ ...options, holdDeadlineMs })
    return leased ? new LeasedAdmissionStore(store, { intervalMs: 5, ttlMs: 30_000 }) : store
  }
  const store = await open()
  const shortStore = await open(SHORT_DEADLINE_MS)
  return {
    store,
    shortStore,
    async close() {
      await store.close()
      await shortStore.close()
      if (url === redisUrl) await deleteRedisKeys(keyPrefix)
    },
  }
}

describeWith('redis', 'Redis', () => {
  contract('leased redis', () => redisHarness(true))
  contract('redis', () => redisHarness(false))
})

// The same contract on a real three-master Redis Cluster: every script's keys are in one slot.
describe.if(Boolean(redisServerBinary && redisCliBinary))('Redis Cluster', () => {
  let cluster: RedisCluster
  beforeAll(async () => {
    cluster = await startRedisCluster()
  })
  afterAll(() => cluster?.stop())
  contract('redis cluster', () => redisHarness(false, cluster.url))
  contract('leased redis cluster', () => redisHarness(true, cluster.url))
})
