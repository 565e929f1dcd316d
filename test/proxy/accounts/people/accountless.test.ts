// Accountless accounts beside identity ones: default key caps by account kind, and when the top-up step
// may be offered (secretsConfirmed, for the billing routes).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createKey } from '../../../../proxy/accounts/keys.ts'
import {
  confirmSecrets,
  createAccountless,
  secretsConfirmed,
} from '../../../../proxy/accounts/people/accountless.ts'
import { startTestGateway, type TestGateway } from '../../../helpers/gateway.ts'
import { describeWith } from '../../../helpers/services.ts'

describeWith('postgres', 'accountless accounts', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({
      store: 'memory',
      database: 'postgres',
      env: {
        KEY_DAILY_LIMIT_USD: '40',
        KEY_MONTHLY_LIMIT_USD: '400',
        ACCOUNTLESS_KEY_DAILY_LIMIT_USD: '4',
        ACCOUNTLESS_KEY_MONTHLY_LIMIT_USD: '40',
      },
    })
  })
  afterAll(() => gw.close())

  const caps = async (keyId: string) => {
    const [row] = await gw.app.operator
      .sql`SELECT daily_limit_nano, monthly_limit_nano FROM api_keys WHERE id = ${keyId}`
    return [Number(row!.daily_limit_nano), Number(row!.monthly_limit_nano)]
  }

  test('a new key gets the default caps of its account kind; explicit caps still win', async () => {
    const accountless = await createAccountless(gw.app.operator)
    expect(await caps(accountless.keyId)).toEqual([4e9, 40e9])
    const identity = await gw.account('1')
    await gw.app.operator.sql`UPDATE accounts SET kind = 'identity' WHERE id = ${identity}`
    expect(await caps((await createKey(gw.app.operator, identity)).id)).toEqual([40e9, 400e9])
    expect(
      await caps(
        (await createKey(gw.app.operator, accountless.accountId, { dailyLimitNano: 7 })).id,
      ),
    ).toEqual([7, 40e9])
  })

  test('the top-up step: after the secrets are confirmed for an accountless account, always for one with an identity', async () => {
    const { sql } = gw.app.operator
    const { accountId } = await createAccountless(gw.app.operator)
    expect(await secretsConfirmed(sql, accountId)).toBe(false)
    const first = await confirmSecrets(sql, accountId, Date.parse('2030-01-01T00:00:00Z'))
    expect(await confirmSecrets(sql, accountId, Date.parse('2031-01-01T00:00:00Z'))).toEqual(first)
    expect(await secretsConfirmed(sql, accountId)).toBe(true)
    const identity = await gw.account('1')
    await sql`UPDATE accounts SET kind = 'identity' WHERE id = ${identity}`
    expect(await secretsConfirmed(sql, identity)).toBe(true)
    expect(await secretsConfirmed(sql, 'acct_unknown')).toBe(false)
  })
})
