// The operator's payment commands: held payments (a sanctions-screening hit) are listed, released
// (credited once) or rejected (never credited); a payment that is not held is refused by name.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import {
  holdPayment,
  recordPayment,
  type Payment,
} from '../../../../proxy/accounts/payments/payments.ts'
import { runAdminCli } from '../../../helpers/admin-cli.ts'
import { startTestGateway, type TestGateway } from '../../../helpers/gateway.ts'
import { settledAccount, sumOf } from '../../../helpers/ledger.ts'
import { describeWith, uniqueName } from '../../../helpers/services.ts'

const USD = 1_000_000_000

describeWith('postgres', 'payment commands of bun run admin', () => {
  let gw: TestGateway
  let siteUrl: string
  const admin = (...args: string[]) =>
    runAdminCli({ SITE_URL: siteUrl, ADMIN_TOKEN: gw.app.operatorToken }, args)

  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres' })
    siteUrl = gw.app.listen().siteUrl
  })
  afterAll(() => gw?.close())

  async function held(accountId: string, amountNano: number): Promise<Payment> {
    const payment = await recordPayment(gw.app.operator.sql, {
      accountId,
      provider: 'chain',
      externalId: uniqueName('31337:0xtx:'),
      amountNano,
      currency: 'USDC',
    })
    await holdPayment(gw.app.operator.sql, 'chain', payment.externalId)
    return payment
  }

  test('held payments are listed, released once, rejected, and a payment not held is refused', async () => {
    const accountId = await gw.account('0')
    const first = await held(accountId, 30 * USD)
    const second = await held(accountId, 4 * USD)

    const listed = await admin('payments', 'list', '--state', 'held', '--account', accountId)
    expect(listed.code).toBe(0)
    expect(listed.json.payments.map((p: Payment) => p.id).sort()).toEqual(
      [first.id, second.id].sort(),
    )

    const released = await admin('payments', 'release', first.id)
    expect(released).toMatchObject({ code: 0, json: { id: first.id, state: 'credited' } })
    const again = await admin('payments', 'release', first.id)
    expect(again.code).not.toBe(0)
    expect(JSON.parse(again.stderr).error).toMatchObject({ code: 'conflict' })
    expect(JSON.parse(again.stderr).error.message).toContain('credited, not held')

    const rejected = await admin('payments', 'reject', second.id)
    expect(rejected).toMatchObject({ code: 0, json: { id: second.id, state: 'failed' } })
    expect((await admin('payments', 'release', 'pay_nothing')).code).not.toBe(0)

    const { snapshot, ledger } = await settledAccount(gw, accountId)
    expect(snapshot.balanceNano).toBe(30 * USD)
    expect(snapshot.balanceNano).toBe(sumOf(ledger))
  })
})
