// The hourly usage rollup kept by the record writer: counts equal the requests made, only rows the
// request-log insert added are counted (a retried batch adds nothing), and a failed batch rolls back both.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { RequestLogRow } from '../../../../proxy/stores/ledger/rows.ts'
import { startTestGateway, testModel, type TestGateway } from '../../../helpers/gateway.ts'
import { describeWith } from '../../../helpers/services.ts'

type Rollup = {
  key_id: string
  model: string
  hour: Date
  requests: number
  errors: number
  input_tokens: number
  output_tokens: number
  cost_nano: number
  charged_nano: number
}

describeWith('postgres', 'usage rollup', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({
      store: 'memory',
      database: 'postgres',
      models: [
        testModel('test/cheap', 'fake?tokens=7'),
        testModel('test/broken', 'fake?status=500'),
      ],
    })
  })
  afterAll(() => gw.close())

  const rollup = (accountId: string) =>
    gw.app.operator.sql<
      Rollup[]
    >`SELECT * FROM usage_hourly WHERE account_id = ${accountId} ORDER BY model`

  function logRow(
    accountId: string,
    keyId: string,
    requestId: string,
    overrides: Partial<RequestLogRow> = {},
  ): RequestLogRow {
    const now = Date.now()
    return {
      requestId,
      accountId,
      keyId,
      apiStyle: 'chat',
      model: 'test/cheap',
      servedModel: 'test/cheap',
      provider: 'fake',
      stream: false,
      status: 200,
      errorCode: null,
      inputTokens: 10,
      cachedTokens: 0,
      outputTokens: 5,
      costNano: 20_000,
      chargedNano: 20_000,
      latencyMs: 3,
      firstByteMs: null,
      redactions: null,
      startedAtMs: now,
      finishedAtMs: now,
      ...overrides,
    }
  }

  test('counts equal the requests made, errors among them, by the model that served', async () => {
    const accountId = await gw.account('1')
    const { id: keyId, key } = await gw.key(accountId)
    for (let i = 0; i < 3; i++)
      expect(
        (
          await gw.chat(key, {
            model: 'test/cheap',
            messages: [{ role: 'user', content: `hi ${i}` }],
          })
        ).status,
      ).toBe(200)
    expect(
      (await gw.chat(key, { model: 'test/broken', messages: [{ role: 'user', content: 'hi' }] }))
        .status,
    ).toBe(503)
    expect(
      (await gw.chat(key, { model: 'test/nope', messages: [{ role: 'user', content: 'hi' }] }))
        .status,
    ).toBe(404)
    await gw.app.gateway.writer.drain()

    const rows = await rollup(accountId)
    expect(rows.map((row) => [row.model, row.requests, row.errors])).toEqual([
      ['test/broken', 1, 1],
      ['test/cheap', 3, 0],
      ['test/nope', 1, 1],
    ])
    const [logged] = await gw.app.operator.sql<
      { requests: number; input: number; output: number; cost: number; charged: number }[]
    >`
      SELECT count(*)::int AS requests, sum(input_tokens)::bigint AS input, sum(output_tokens)::bigint AS output,
             sum(cost_nano)::bigint AS cost, sum(charged_nano)::bigint AS charged
      FROM request_logs WHERE account_id = ${accountId}`
    const sum = (pick: (row: Rollup) => number) => rows.reduce((total, row) => total + pick(row), 0)
    expect(sum((row) => row.requests)).toBe(logged!.requests)
    expect(sum((row) => row.input_tokens)).toBe(logged!.input)
    expect(sum((row) => row.output_tokens)).toBe(logged!.output)
    expect(sum((row) => row.cost_nano)).toBe(logged!.cost)
    expect(sum((row) => row.charged_nano)).toBe(logged!.charged)
    expect(rows.find((row) => row.model === 'test/cheap')!.output_tokens).toBe(21)
    expect(rows.every((row) => row.key_id === keyId && row.hour.getTime() % 3_600_000 === 0)).toBe(
      true,
    )
    // Charged equals the live balance's loss.
    const live = await gw.app.operator.store.snapshot(accountId)
    expect(1_000_000_000 - live.balanceNano).toBe(sum((row) => row.charged_nano))
  })

  test('a batch written again adds nothing: only rows the request-log insert added are counted', async () => {
    const accountId = await gw.account('1')
    const { id: keyId } = await gw.key(accountId)
    const { writer } = gw.app.gateway
    writer.addRequestLog(logRow(accountId, keyId, 'req_retry_a'))
    writer.addRequestLog(logRow(accountId, keyId, 'req_retry_b'))
    await writer.drain()
    // The same rows again (a retry after an unknown outcome), with one new row in the batch.
    writer.addRequestLog(logRow(accountId, keyId, 'req_retry_a'))
    writer.addRequestLog(logRow(accountId, keyId, 'req_retry_b'))
    writer.addRequestLog(
      logRow(accountId, keyId, 'req_retry_c', {
        status: 429,
        errorCode: 'usage_limit_exceeded',
        inputTokens: 0,
        outputTokens: 0,
        costNano: 0,
        chargedNano: 0,
      }),
    )
    await writer.drain()
    const [row] = await rollup(accountId)
    expect(row).toMatchObject({
      requests: 3,
      errors: 1,
      input_tokens: 20,
      output_tokens: 10,
      cost_nano: 40_000,
      charged_nano: 40_000,
    })
  })

  test('a request ID twice in one batch is counted once, as it is logged once', async () => {
    const accountId = await gw.account('1')
    const { id: keyId } = await gw.key(accountId)
    gw.app.gateway.writer.addRequestLog(logRow(accountId, keyId, 'req_twice'))
    gw.app.gateway.writer.addRequestLog(logRow(accountId, keyId, 'req_twice'))
    await gw.app.gateway.writer.drain()
    expect((await rollup(accountId)).map((row) => row.requests)).toEqual([1])
  })

  test('a batch that fails leaves neither its rows nor its counts, and counts once when it succeeds', async () => {
    const accountId = await gw.account('1')
    const { id: keyId } = await gw.key(accountId)
    const { sql } = gw.app.operator
    // The rollup upsert fails for this model: the request-log rows of the batch must roll back with it.
    await sql`ALTER TABLE usage_hourly ADD CONSTRAINT test_poison CHECK (model <> 'test/poison')`
    try {
      gw.app.gateway.writer.addRequestLog(logRow(accountId, keyId, 'req_tx_a'))
      gw.app.gateway.writer.addRequestLog(
        logRow(accountId, keyId, 'req_tx_b', { model: 'test/poison', servedModel: null }),
      )
      await gw.app.gateway.writer.flush()
      expect(await sql`SELECT 1 FROM request_logs WHERE account_id = ${accountId}`).toHaveLength(0)
      expect(await rollup(accountId)).toHaveLength(0)
    } finally {
      await sql`ALTER TABLE usage_hourly DROP CONSTRAINT test_poison`
    }
    await gw.app.gateway.writer.drain()
    expect(await sql`SELECT 1 FROM request_logs WHERE account_id = ${accountId}`).toHaveLength(2)
    expect((await rollup(accountId)).map((row) => [row.model, row.requests])).toEqual([
      ['test/cheap', 1],
      ['test/poison', 1],
    ])
  })

  test('hours are cut in UTC and requests of different hours stay apart', async () => {
    const accountId = await gw.account('1')
    const { id: keyId } = await gw.key(accountId)
    const base = Date.UTC(2025, 0, 31, 10, 0, 0)
    gw.app.gateway.writer.addRequestLog(
      logRow(accountId, keyId, 'req_h1', { startedAtMs: base + 59 * 60_000 }),
    )
    gw.app.gateway.writer.addRequestLog(
      logRow(accountId, keyId, 'req_h2', { startedAtMs: base + 60 * 60_000 }),
    )
    gw.app.gateway.writer.addRequestLog(
      logRow(accountId, keyId, 'req_h3', { startedAtMs: base + 1 }),
    )
    await gw.app.gateway.writer.drain()
    const rows = await gw.app.operator.sql<
      Rollup[]
    >`SELECT * FROM usage_hourly WHERE account_id = ${accountId} ORDER BY hour`
    expect(rows.map((row) => [row.hour.toISOString(), row.requests])).toEqual([
      ['2025-01-31T10:00:00.000Z', 2],
      ['2025-01-31T11:00:00.000Z', 1],
    ])
  })
})
