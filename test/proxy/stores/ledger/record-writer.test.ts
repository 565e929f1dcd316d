// The record writer under steady load: ledger rows that keep arriving while a flush writes do not
// keep the request log waiting. Each flush writes what was queued when it began; the rest waits for
// the next one.
import { expect, test } from 'bun:test'
import type { Sql } from 'postgres'
import type { AdmissionStore } from '../../../../proxy/stores/admission/store.ts'
import { RecordWriter } from '../../../../proxy/stores/ledger/record-writer.ts'
import type { LedgerRow, RequestLogRow } from '../../../../proxy/stores/ledger/rows.ts'

/** A stand-in for the Postgres client: each statement takes a few ms; rows counted by table. */
function slowSql(inserted: Map<string, number>): Sql {
  const sql = async (strings: TemplateStringsArray, ...values: unknown[]) => {
    const table = /^\s*(?:WITH added AS \(\s*)?INSERT INTO (\w+)/.exec(strings[0] ?? '')?.[1]
    await Bun.sleep(3)
    if (table && Array.isArray(values[0]))
      inserted.set(table, (inserted.get(table) ?? 0) + (values[0] as unknown[]).length)
    return []
  }
  return sql as unknown as Sql
}

const store = { ackLedger: async () => {} } as unknown as AdmissionStore

function rows(n: number): { ledger: LedgerRow; log: RequestLogRow } {
  const requestId = `req_${n}`
  const base = { accountId: 'acct_1', keyId: 'key_1', requestId }
  return {
    ledger: { ...base, kind: 'charge', amountNano: -1, writtenOffNano: 0, reason: null, atMs: n },
    log: {
      ...base,
      apiStyle: 'chat',
      model: 'm',
      servedModel: 'm',
      provider: 'p',
      stream: false,
      status: 200,
      errorCode: null,
      inputTokens: 1,
      cachedTokens: 0,
      outputTokens: 1,
      costNano: 1,
      chargedNano: 1,
      latencyMs: 1,
      firstByteMs: null,
      redactions: null,
      startedAtMs: n,
      finishedAtMs: n,
    },
  }
}

test('request-log rows are written while ledger rows keep arriving', async () => {
  const inserted = new Map<string, number>()
  const writer = new RecordWriter(slowSql(inserted), store, 5)
  writer.start()
  // Requests end every millisecond for a third of a second, each with its log row and its charge.
  let n = 0
  const until = Date.now() + 300
  while (Date.now() < until) {
    const { ledger, log } = rows(++n)
    writer.addRequestLog(log)
    writer.addLedger([ledger])
    await Bun.sleep(1)
  }
  const loggedDuringLoad = inserted.get('request_logs') ?? 0
  await writer.stop()
  expect(loggedDuringLoad).toBeGreaterThan(n / 2)
  expect(inserted.get('request_logs')).toBe(n)
  expect(inserted.get('ledger')).toBe(n)
})
