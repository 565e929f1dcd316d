// A Redis Cluster master failed over under load: the master serving the account's slot is killed with
// SIGKILL and its replica takes over. While the slot has no master, requests are refused with 502
// admission_unconfirmed (never served without admission); once the replica serves it, requests are
// served again without an operator's action; and once quiet every hold has ended, the ledger equals the
// balance, and every answered request is logged and charged once.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import calculateSlot from 'cluster-key-slot'
import { redisKeys } from '../../proxy/stores/admission/redis-keys.ts'
import type { Database } from '../../proxy/stores/db/database.ts'
import { startRedisCluster, type RedisCluster } from '../helpers/redis-cluster.ts'
import { createTestDatabase, describeWith } from '../helpers/services.ts'
import {
  expectSettled,
  fundedKey,
  startFaultGateway,
  startLoad,
  type FaultGateway,
} from './harness.ts'

describeWith('postgres', 'a Redis Cluster master failed over under load', () => {
  let cluster: RedisCluster
  let db: Database
  let gateway: FaultGateway

  beforeAll(async () => {
    cluster = await startRedisCluster(3, 1)
    db = await createTestDatabase()
    gateway = await startFaultGateway({
      DATABASE_URL: db.location,
      REDIS_URL: cluster.url,
      SWEEP_INTERVAL_MS: '500',
      // Holds of requests refused as unconfirmed during the failover end at this deadline.
      HOLD_DEADLINE_MS: '5000',
      ADMISSION_LEASE_TTL_MS: '3000',
    })
  }, 120_000)
  afterAll(async () => {
    await gateway?.close()
    await cluster?.stop()
    await db?.close()
  })

  test('refused while the slot has no master, served again after, and the money adds up', async () => {
    const { accountId, key } = await fundedKey(gateway)
    const load = startLoad(gateway, key)
    await Bun.sleep(1_000)
    const before = load.answered.length
    const { killedPort, promotedPort } = await cluster.failMaster(
      calculateSlot(redisKeys.state(accountId)),
    )
    expect(promotedPort).not.toBe(killedPort)
    const promotedAt = Date.now()
    await Bun.sleep(3_000)
    await load.stop()

    expect(before).toBeGreaterThan(0)
    for (const refusal of load.refusals.keys()) expect(refusal).toBe('502 admission_unconfirmed')
    expect(load.lastServedAt()).toBeGreaterThan(promotedAt)

    const rows = await expectSettled(gateway, db.sql, accountId, load.answered)
    const charged = rows.filter((row) => row.kind === 'charge').map((row) => row.request_id)
    expect(new Set(charged).size).toBe(charged.length)
    expect(new Set(rows.map((row) => row.request_id))).toEqual(new Set(load.answered))
  }, 120_000)
})
