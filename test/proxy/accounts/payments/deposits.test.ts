// Stablecoin deposit addresses: each account gets its own, derived from the operator's extended public
// key (the address a wallet holding the matching private key derives at that index), the same one every
// time, shown only to whoever may top up; settings that cannot work stop the start with their name.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mnemonicToSeedSync } from '@scure/bip39'
import { HDKey } from '@scure/bip32'
import { mnemonicToAccount } from 'viem/accounts'
import { depositSettings } from '../../../../proxy/accounts/payments/deposits.ts'
import { confirmSecrets } from '../../../../proxy/accounts/people/accountless.ts'
import { loadConfig } from '../../../../proxy/core/config.ts'
import { admin, sessionFor } from '../../../helpers/admin.ts'
import { startTestGateway, type TestGateway } from '../../../helpers/gateway.ts'

const MNEMONIC = 'test test test test test test test test test test test junk'
const ACCOUNT_KEY = HDKey.fromMasterSeed(mnemonicToSeedSync(MNEMONIC)).derive("m/44'/60'/0'/0")
const XPUB = ACCOUNT_KEY.publicExtendedKey
const USDC = 'USDC:0x5FbDB2315678afecb367f032d93F642f64180aa3:6'

describe('stablecoin deposit addresses', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({
      store: 'memory',
      database: 'embedded',
      env: {
        DEPOSIT_XPUB: XPUB,
        DEPOSIT_TOKENS: USDC,
        DEPOSIT_CHAIN_ID: '31337',
        DEPOSIT_CONFIRMATIONS: '3',
      },
    })
  })
  afterAll(() => gw.close())

  async function ownerOf(accountId: string) {
    await confirmSecrets(gw.app.operator.sql, accountId, Date.now())
    return (await sessionFor(gw, accountId)).cookie
  }
  async function deposit(cookie: string) {
    return admin(gw, 'GET', '/admin/v1/billing/deposit', { cookie })
  }
  const indexOf = async (accountId: string) =>
    (
      await gw.app.operator.sql<{ derivation_index: number }[]>`
        SELECT derivation_index FROM deposit_addresses WHERE account_id = ${accountId}`
    )[0]!.derivation_index

  test('each account has its own address, the wallet derives it, and it stays the same', async () => {
    const first = await gw.account('0')
    const cookie = await ownerOf(first)
    const response = await deposit(cookie)
    expect(response.status).toBe(200)
    const answer = (await response.json()) as Record<string, unknown>
    expect(answer).toEqual({
      accountId: first,
      address: mnemonicToAccount(MNEMONIC, { addressIndex: await indexOf(first) }).address,
      chainId: 31337,
      confirmations: 3,
      tokens: [
        { symbol: 'USDC', contract: '0x5FbDB2315678afecb367f032d93F642f64180aa3', decimals: 6 },
      ],
    })
    expect(((await (await deposit(cookie)).json()) as { address: string }).address).toBe(
      answer.address as string,
    )

    // Twenty first requests at once for another account: one address, not the first account's.
    const second = await gw.account('0')
    const secondCookie = await ownerOf(second)
    const answers = await Promise.all(
      Array.from(
        { length: 20 },
        async () => ((await (await deposit(secondCookie)).json()) as { address: string }).address,
      ),
    )
    expect(new Set(answers).size).toBe(1)
    expect(answers[0]).not.toBe(answer.address)
    expect(answers[0]).toBe(
      mnemonicToAccount(MNEMONIC, { addressIndex: await indexOf(second) }).address,
    )
    const billing = await admin(gw, 'GET', '/admin/v1/billing', { cookie })
    expect(((await billing.json()) as { topUp: { deposits: boolean } }).topUp.deposits).toBe(true)
  })

  test('only whoever may top up sees it: not before both secrets are confirmed, not a member', async () => {
    const accountId = await gw.account('0')
    const link = await sessionFor(gw, accountId)
    const early = await deposit(link.cookie)
    expect(early.status).toBe(403)
    expect(((await early.json()) as { error: { message: string } }).error.message).toContain(
      'Confirm that you saved both',
    )
    await confirmSecrets(gw.app.operator.sql, accountId, Date.now())
    const member = await sessionFor(gw, accountId, 'member')
    expect((await deposit(member.cookie)).status).toBe(403)
    const rows = await gw.app.operator.sql`
      SELECT 1 FROM deposit_addresses WHERE account_id = ${accountId}`
    expect(rows).toHaveLength(0)
  })
})

describe('deposit settings', () => {
  const settings = (env: Record<string, string>) =>
    depositSettings(loadConfig({ DEPOSIT_TOKENS: USDC, ...env }))

  test('a private extended key, a bad key and bad tokens stop the start, named', () => {
    expect(() => settings({ DEPOSIT_XPUB: ACCOUNT_KEY.privateExtendedKey })).toThrow(
      'never a private one',
    )
    expect(() => settings({ DEPOSIT_XPUB: 'xpub-nonsense' })).toThrow('DEPOSIT_XPUB')
    expect(() => settings({ DEPOSIT_XPUB: XPUB, DEPOSIT_TOKENS: 'USDC:0x12:6' })).toThrow(
      'DEPOSIT_TOKENS',
    )
    expect(() => settings({ DEPOSIT_XPUB: XPUB, DEPOSIT_TOKENS: '' })).toThrow('at least one token')
    expect(settings({})).toBeUndefined()
  })
})
