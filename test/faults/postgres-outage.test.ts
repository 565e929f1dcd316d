// PostgreSQL stopped for ten seconds under load, on a PostgreSQL the test runs itself: requests with
// known keys go on (the hot path reads no Postgres), the ledger and request-log rows wait and are written
// once it is back, and afterwards every answered request is in the request log exactly once, charged
// once, and the ledger equals the balance, with no operator action.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import postgres from 'postgres'
import {
  postgresBin,
  startPostgresProcess,
  type PostgresProcess,
} from '../helpers/postgres-process.ts'
import { deleteRedisKeys, describeWith, redisUrl, uniqueName } from '../helpers/services.ts'
import {
  expectSettled,
  fundedKey,
  startFaultGateway,
  startLoad,
  type FaultGateway,
} from './harness.ts'

describeWith('redis', 'PostgreSQL stopped for ten seconds under load', () => {
  let pg: PostgresProcess
  let gateway: FaultGateway
  const keyPrefix = `${uniqueName('test:')}:`

  beforeAll(async () => {
    if (!postgresBin) throw new Error('PostgreSQL binaries are needed for this test')
    pg = await startPostgresProcess()
    gateway = await startFaultGateway({
      DATABASE_URL: pg.url,
      REDIS_URL: redisUrl!,
      REDIS_KEY_PREFIX: keyPrefix,
    })
  }, 120_000)
  afterAll(async () => {
    await gateway?.close()
    await pg?.destroy()
    await deleteRedisKeys(keyPrefix)
  })

  test('requests go on, rows catch up, each answered request is logged and charged once', async () => {
    const { accountId, key } = await fundedKey(gateway)
    const load = startLoad(gateway, key)
    await Bun.sleep(1_000)
    await pg.stop()
    const before = load.answered.length
    await Bun.sleep(10_000)
    const during = load.answered.length - before
    await pg.start()
    await Bun.sleep(1_500)
    await load.stop()
    expect(during).toBeGreaterThan(100)
    expect([...load.refusals]).toEqual([])

    const sql = postgres(pg.url, { max: 1, onnotice: () => {} })
    try {
      const rows = await expectSettled(gateway, sql, accountId, load.answered)
      expect(rows.filter((row) => row.kind === 'charge')).toHaveLength(load.answered.length)
    } finally {
      await sql.end()
    }
  }, 120_000)
})
