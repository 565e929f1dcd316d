// Redis killed with SIGKILL under load and started again empty: while it is gone requests are refused
// with 502 admission_unconfirmed (never served without admission, except inside a lease taken before),
// after it is back requests are served again without an operator's action, accounts are reloaded from
// Postgres, and in the end every answered request is logged exactly once and has one ledger row (charged,
// or written off when Redis lost its hold mid-request), no balance is negative, and the ledger equals
// the balance.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Database } from '../../proxy/stores/db/database.ts'
import {
  redisServerBinary,
  startRedisProcess,
  type RedisProcess,
} from '../helpers/redis-process.ts'
import { createTestDatabase, describeWith } from '../helpers/services.ts'
import {
  expectSettled,
  fundedKey,
  startFaultGateway,
  startLoad,
  type FaultGateway,
} from './harness.ts'

describeWith('postgres', 'Redis killed and started again empty under load', () => {
  let redis: RedisProcess
  let db: Database
  let gateway: FaultGateway

  beforeAll(async () => {
    if (!redisServerBinary) throw new Error('redis-server is needed for this test')
    redis = await startRedisProcess()
    db = await createTestDatabase()
    gateway = await startFaultGateway({
      DATABASE_URL: db.location,
      REDIS_URL: redis.url,
      SWEEP_INTERVAL_MS: '500',
    })
  }, 120_000)
  afterAll(async () => {
    await gateway?.close()
    await redis?.kill()
    await db?.close()
  })

  test('refused while it is gone, served again after, and the money adds up', async () => {
    const { accountId, key } = await fundedKey(gateway)
    const load = startLoad(gateway, key)
    await Bun.sleep(1_000)
    const port = Number(new URL(redis.url).port)
    await redis.kill()
    await Bun.sleep(2_000)
    redis = await startRedisProcess(port)
    const restartedAt = Date.now()
    await Bun.sleep(3_000)
    await load.stop()

    expect([...load.refusals.keys()]).toEqual(['502 admission_unconfirmed'])
    expect(load.lastServedAt()).toBeGreaterThan(restartedAt)

    const rows = await expectSettled(gateway, db.sql, accountId, load.answered)
    // Each answered request has one ledger row: a charge, or a write-off for one whose hold Redis lost.
    const charged = rows.filter((row) => row.kind === 'charge').map((row) => row.request_id)
    expect(new Set(charged).size).toBe(charged.length)
    expect(new Set(rows.map((row) => row.request_id))).toEqual(new Set(load.answered))
  }, 120_000)
})
