// The ledger's references, checked once per insert statement: a batch with one row for an account
// that does not exist, or for a key of another account, is refused whole; accounts and keys cannot be
// deleted from under the rows that name them.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { insertLedger } from '../../proxy/stores/ledger/record-writer.ts'
import type { LedgerRow } from '../../proxy/stores/ledger/rows.ts'
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts'
import { describeWith, uniqueName } from '../helpers/services.ts'
import { rejection } from '../helpers/settle.ts'

const databases = [
  { database: 'postgres', needs: ['postgres'] },
  { database: 'embedded', needs: [] },
] as const

for (const { database, needs } of databases) {
  describeWith([...needs], `ledger references on ${database} Postgres`, () => {
    let gw: TestGateway
    let accountId: string
    let keyId: string
    let otherKeyId: string
    beforeAll(async () => {
      gw = await startTestGateway({ store: 'memory', database })
      accountId = await gw.account('1')
      keyId = (await gw.key(accountId)).id
      otherKeyId = (await gw.key(await gw.account('1'))).id
    })
    afterAll(() => gw.close())

    const charge = (row: Partial<LedgerRow>): LedgerRow => ({
      accountId,
      keyId,
      requestId: uniqueName('req_'),
      kind: 'charge',
      amountNano: -5,
      writtenOffNano: 0,
      reason: null,
      atMs: Date.now(),
      ...row,
    })
    const rowsOf = async (ids: string[]) =>
      (
        await gw.app.gateway.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM ledger WHERE request_id IN ${gw.app.gateway.sql(ids)}`
      )[0]!.n

    test('a batch whose rows name existing accounts and their own keys is written', async () => {
      const rows = [charge({}), charge({}), charge({ keyId: null })]
      await insertLedger(gw.app.gateway.sql, rows)
      expect(await rowsOf(rows.map((row) => row.requestId))).toBe(3)
    })

    test('one row for an account that does not exist refuses the whole batch', async () => {
      const rows = [charge({}), charge({ accountId: 'acct_missing', keyId: null }), charge({})]
      const error = await rejection(insertLedger(gw.app.gateway.sql, rows))
      expect(String(error)).toContain('account acct_missing which does not exist')
      expect(await rowsOf(rows.map((row) => row.requestId))).toBe(0)
    })

    test('a row for a key that does not exist, or of another account, is refused', async () => {
      for (const key of ['key_missing', otherKeyId]) {
        const rows = [charge({}), charge({ keyId: key })]
        const error = await rejection(insertLedger(gw.app.gateway.sql, rows))
        expect(String(error)).toContain(
          `key ${key} which does not exist or belongs to another account`,
        )
        expect(await rowsOf(rows.map((row) => row.requestId))).toBe(0)
      }
    })

    test('accounts and keys are never deleted', async () => {
      const sql = gw.app.gateway.sql
      expect(String(await rejection(sql`DELETE FROM api_keys WHERE id = ${keyId}`))).toContain(
        'api_keys rows are never deleted',
      )
      expect(String(await rejection(sql`DELETE FROM accounts WHERE id = ${accountId}`))).toContain(
        'accounts rows are never deleted',
      )
    })
  })
}
