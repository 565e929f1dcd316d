// A key's requests per minute across four processes sharing one Redis, each with its admission leases,
// watched for more than a minute of bursts that land anywhere, just before bucket and minute
// boundaries included: no span of 60 seconds holds more admissions than the limit.
import { afterAll, expect, test } from 'bun:test'
import { LeasedAdmissionStore } from '../../../../proxy/stores/admission/leased-store.ts'
import { createRedisStore } from '../../../../proxy/stores/admission/redis-store.ts'
import type { AdmitInput } from '../../../../proxy/stores/admission/store.ts'
import { BUCKET_MS } from '../../../../proxy/stores/admission/windows.ts'
import { deleteRedisKeys, describeWith, redisUrl, uniqueName } from '../../../helpers/services.ts'
import { prng } from '../../../helpers/prng.ts'

const LIMIT = 300
const RUN_MS = 68_000
/** Admissions are timed here, Redis times them in its script: a few milliseconds either way. */
const SLACK_MS = 10

describeWith('redis', 'requests per minute in any span', () => {
  const keyPrefix = `${uniqueName('test:')}:`
  const stores: LeasedAdmissionStore[] = []
  afterAll(async () => {
    for (const store of stores) await store.close().catch(() => {})
    await deleteRedisKeys(keyPrefix)
  })

  test(
    'four processes under bursts for more than a minute: no 60-second span past the limit',
    async () => {
      for (let i = 0; i < 4; i++) {
        const inner = await createRedisStore({ url: redisUrl!, keyPrefix, timeoutMs: 2_000 })
        stores.push(new LeasedAdmissionStore(inner, { intervalMs: 5, ttlMs: 30_000 }))
      }
      const accountId = uniqueName('acct_')
      await stores[0]!.seed(accountId, {
        balanceNano: 1e12,
        recentCreditIds: [],
        keySpend: [],
        guardrailSpend: [],
      })
      let counter = 0
      const input = (): AdmitInput => ({
        requestId: `req_${++counter}`,
        accountId,
        keyId: 'key_spans',
        holdNano: 1_000,
        tokens: 10,
        keyLimits: { rpm: LIMIT, tpm: 0, concurrency: 0, dailyNano: 0, monthlyNano: 0 },
        accountLimits: { rpm: 0, tpm: 0, concurrency: 0 },
      })
      const admitted: number[] = []
      let refused = 0
      const end = Date.now() + RUN_MS
      await Promise.all(
        stores.map(async (store, index) => {
          const random = prng(index + 1)
          while (Date.now() < end) {
            const results = await Promise.all(
              Array.from({ length: random.int(1, 40) }, async () => {
                const request = input()
                const result = await store.admit(request)
                if (result.ok) {
                  admitted.push(Date.now())
                  await store.settle({
                    requestId: request.requestId,
                    accountId,
                    costNano: 100,
                    tokens: 5,
                    forgive: false,
                  })
                }
                return result
              }),
            )
            refused += results.filter((result) => !result.ok).length
            // Next burst: soon, or just before the next bucket boundary, or the next minute's when it
            // is near (demand never pauses for long, so admissions resume as soon as the view allows).
            const now = Date.now()
            const toMinute = 60_000 - (now % 60_000) - random.int(1, 60)
            const pause = random.weighted([
              [random.int(5, 400), 3],
              [BUCKET_MS - (now % BUCKET_MS) - random.int(1, 60), 1],
              [toMinute < 3_000 ? toMinute : random.int(5, 400), 1],
            ] as const)
            await Bun.sleep(Math.max(0, Math.min(pause, end - now)))
          }
        }),
      )
      admitted.sort((a, b) => a - b)
      let busiest = 0
      for (let first = 0; first < admitted.length; first++) {
        let last = first
        while (last < admitted.length && admitted[last]! < admitted[first]! + 60_000 - SLACK_MS)
          last++
        busiest = Math.max(busiest, last - first)
      }
      expect(busiest).toBeLessThanOrEqual(LIMIT)
      // The limit was reached, more was asked, and the first minute's admissions left the view.
      expect(busiest).toBeGreaterThan(LIMIT * 0.9)
      expect(refused).toBeGreaterThan(LIMIT)
      expect(admitted.length).toBeGreaterThan(LIMIT)
    },
    RUN_MS + 30_000,
  )
})
