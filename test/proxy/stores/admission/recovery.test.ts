// Redis is the live state, Postgres the truth: the live state can be rebuilt from the ledger without
// creating money, charges left in the outbox reach the ledger, and key changes reach every process.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import Redis from 'ioredis'
import { redisKeys } from '../../../../proxy/stores/admission/redis-keys.ts'
import { recoverOutbox } from '../../../../proxy/ops/maintenance.ts'
import { startTestGateway, type TestGateway } from '../../../helpers/gateway.ts'
import { ledgerOf, settledAccount, sumOf } from '../../../helpers/ledger.ts'
import { describeWith, redisUrl } from '../../../helpers/services.ts'

const hello = [{ role: 'user', content: 'hello' }]

describeWith(['postgres', 'redis'], 'recovery', () => {
  let gw: TestGateway
  let redis: Redis
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'redis', database: 'postgres' })
    redis = new Redis(redisUrl!, { keyPrefix: gw.app.config.REDIS_KEY_PREFIX })
  })
  afterAll(async () => {
    redis.disconnect()
    await gw.close()
  })

  const forget = (accountId: string) =>
    redis.del(
      redisKeys.state(accountId),
      redisKeys.holds(accountId),
      redisKeys.outbox(accountId),
      redisKeys.credits(accountId),
    )

  test('an account whose live state is lost is rebuilt from the ledger, spend included', async () => {
    const accountId = await gw.account('2')
    const { id: keyId, key } = await gw.key(accountId)
    for (let i = 0; i < 3; i++)
      expect((await gw.chat(key, { model: 'test/cheap', messages: hello })).status).toBe(200)
    const { snapshot: before, ledger } = await settledAccount(gw, accountId)
    expect(before.balanceNano).toBe(sumOf(ledger))

    await forget(accountId)
    expect((await gw.app.gateway.store.snapshot(accountId)).loaded).toBe(false)
    expect((await gw.chat(key, { model: 'test/cheap', messages: hello })).status).toBe(200)
    const { snapshot: after, ledger: ledgerAfter } = await settledAccount(gw, accountId)
    expect(after.balanceNano).toBe(sumOf(ledgerAfter))
    expect(after.balanceNano).toBeLessThan(before.balanceNano)
    const spent = ledgerAfter
      .filter((row) => row.kind === 'charge')
      .reduce((sum, row) => sum - row.amount_nano, 0)
    expect(after.keys.find((entry) => entry.keyId === keyId)!.daySpentNano).toBe(spent)
  })

  test('a credit recorded while the live state is missing is counted once', async () => {
    const accountId = await gw.account('1')
    await forget(accountId)
    const { creditAccount } = await import('../../../../proxy/accounts/accounts.ts')
    const receipt = await creditAccount(gw.app.operator, accountId, 500_000_000, 'test')
    expect(receipt.availableNano).toBe(1_500_000_000)
    // Applying the same ledger entry again (a retry, the reconciliation) changes nothing.
    expect(await gw.app.gateway.store.credit(accountId, receipt.entryId, 500_000_000)).toEqual({
      status: 'again',
      availableNano: 1_500_000_000,
    })
  })

  test('charges a stopped process left in the outbox reach the ledger once, with their log rows', async () => {
    const accountId = await gw.account('1')
    const { id: keyId } = await gw.key(accountId)
    const { store, sql } = gw.app.gateway
    const limits = {
      keyLimits: { rpm: 0, tpm: 0, concurrency: 0, dailyNano: 0, monthlyNano: 0 },
      accountLimits: { rpm: 0, tpm: 0, concurrency: 0 },
    }
    await gw.chat((await gw.key(accountId)).key, { model: 'test/cheap', messages: hello }) // loads the account
    await settledAccount(gw, accountId)
    // A process admits and settles, then stops before writing its ledger rows.
    expect(
      (
        await store.admit({
          requestId: 'req_orphan_a',
          accountId,
          keyId,
          holdNano: 9_000,
          tokens: 1,
          ...limits,
        })
      ).ok,
    ).toBe(true)
    expect(
      await store.settle({
        requestId: 'req_orphan_a',
        accountId,
        costNano: 9_500,
        tokens: 1,
        forgive: false,
        record: JSON.stringify({
          requestId: 'req_orphan_a',
          accountId,
          keyId,
          apiStyle: 'chat',
          model: 'test/cheap',
          servedModel: 'test/cheap',
          provider: 'fake|one',
          stream: false,
          status: 200,
          errorCode: null,
          inputTokens: 1,
          cachedTokens: 0,
          outputTokens: 0,
          costNano: 9_500,
          chargedNano: 0,
          latencyMs: 3,
          firstByteMs: null,
          redactions: null,
          startedAtMs: Date.now() - 3,
          finishedAtMs: Date.now(),
        }),
      }),
    ).toMatchObject({ chargedNano: 9_000, writtenOffNano: 500 })
    expect((await ledgerOf(gw, accountId)).some((row) => row.request_id === 'req_orphan_a')).toBe(
      false,
    )
    expect(await recoverOutbox(sql, store, 0)).toBeGreaterThanOrEqual(1)
    expect(await recoverOutbox(sql, store, 0)).toBe(0)
    const ledger = await ledgerOf(gw, accountId)
    expect(
      ledger
        .filter((row) => row.request_id === 'req_orphan_a')
        .map((row) => [row.kind, row.amount_nano]),
    ).toEqual([
      ['charge', -9_000],
      ['writeoff', 0],
    ])
    expect((await store.snapshot(accountId)).balanceNano).toBe(sumOf(ledger))
    // The request's log row came with the charge, with the amount the store charged.
    expect([
      ...(await sql`SELECT provider, cost_nano, charged_nano FROM request_logs WHERE request_id = 'req_orphan_a'`),
    ]).toEqual([{ provider: 'fake|one', cost_nano: 9_500, charged_nano: 9_000 }])
  })

  test('a key revoked in one process is refused at once by another', async () => {
    const second = await startTestGateway({ store: 'redis', database: 'postgres', sibling: gw })
    try {
      const accountId = await gw.account('1')
      const { id, key } = await gw.key(accountId)
      expect((await second.chat(key, { model: 'test/cheap', messages: hello })).status).toBe(200) // cached in the second process
      const { revokeKey } = await import('../../../../proxy/accounts/keys.ts')
      await revokeKey(gw.app.operator, id)
      let status = 0
      for (let i = 0; i < 50 && status !== 401; i++) {
        status = (await second.chat(key, { model: 'test/cheap', messages: hello })).status
        if (status !== 401) await Bun.sleep(10)
      }
      expect(status).toBe(401)
    } finally {
      await second.close()
    }
  })
})
