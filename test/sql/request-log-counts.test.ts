// The request log's counts are 4-byte integers. A count beyond them (a provider's bogus usage that slipped
// through, a latency of days) is written as their largest: a refused row would hold back every row
// queued after it, in the writer and in outbox recovery alike.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { insertRequestLogs } from '../../proxy/stores/ledger/record-writer.ts'
import type { RequestLogRow } from '../../proxy/stores/ledger/rows.ts'
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts'
import { describeWith, uniqueName } from '../helpers/services.ts'

const databases = [
  { database: 'postgres', needs: ['postgres'] },
  { database: 'embedded', needs: [] },
] as const

for (const { database, needs } of databases) {
  describeWith([...needs], `request-log counts on ${database} Postgres`, () => {
    let gw: TestGateway
    let accountId: string
    let keyId: string
    beforeAll(async () => {
      gw = await startTestGateway({ store: 'memory', database })
      accountId = await gw.account('1')
      keyId = (await gw.key(accountId)).id
    })
    afterAll(() => gw.close())

    test('counts beyond a 4-byte integer are written as its largest, with the rows beside them', async () => {
      const row = (outputTokens: number): RequestLogRow => ({
        requestId: uniqueName('req_'),
        accountId,
        keyId,
        apiStyle: 'chat',
        model: 'a/m',
        servedModel: 'a/m',
        provider: 'p',
        stream: false,
        status: 200,
        errorCode: null,
        inputTokens: 12,
        cachedTokens: 0,
        outputTokens,
        costNano: 5,
        chargedNano: 5,
        latencyMs: 3,
        firstByteMs: null,
        redactions: null,
        startedAtMs: Date.now(),
        finishedAtMs: Date.now(),
      })
      const rows = [row(7), row(1e15), row(9)]
      await insertRequestLogs(gw.app.gateway.sql, rows)
      const written = await gw.app.gateway.sql<{ request_id: string; output_tokens: number }[]>`
        SELECT request_id, output_tokens FROM request_logs WHERE account_id = ${accountId}`
      const byId = new Map(written.map((entry) => [entry.request_id, entry.output_tokens]))
      expect(rows.map((entry) => byId.get(entry.requestId))).toEqual([7, 2_147_483_647, 9])
    })
  })
}
