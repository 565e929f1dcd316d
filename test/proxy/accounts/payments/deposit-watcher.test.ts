// The deposit watcher against a real local chain (Hardhat's node, started here) with a real ERC-20:
// a transfer to an account's deposit address is credited once it has the confirmations, once however
// often (and however concurrently) the watcher reads it, also after a restart; a reorganisation that
// removes a credited transfer reverses it; other tokens, other addresses and listed senders are not
// credited. The ledger equals the balance after each step.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises'
import { HDKey } from '@scure/bip32'
import { mnemonicToSeedSync } from '@scure/bip39'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Address } from 'viem'
import { DepositWatcher } from '../../../../proxy/accounts/payments/deposit-watcher.ts'
import { depositAddress, depositSettings } from '../../../../proxy/accounts/payments/deposits.ts'
import { listPayments } from '../../../../proxy/accounts/payments/payments.ts'
import { SanctionsList } from '../../../../proxy/accounts/payments/sanctions.ts'
import { loadConfig } from '../../../../proxy/core/config.ts'
import { setLogLevel } from '../../../../proxy/core/log.ts'
import { startLocalChain, type LocalChain } from '../../../helpers/chain/local-chain.ts'
import { startTestGateway, type TestGateway } from '../../../helpers/gateway.ts'
import { settledAccount, sumOf } from '../../../helpers/ledger.ts'

// An operator's key on an account path of its own, so no deposit address is one of the chain's funded ones.
const XPUB = HDKey.fromMasterSeed(
  mnemonicToSeedSync('test test test test test test test test test test test junk'),
).derive("m/44'/60'/7'/0").publicExtendedKey
const UNIT = 1_000_000n // one token of six decimals
const USD = 1_000_000_000

describe('deposits on a local chain', () => {
  let chain: LocalChain
  let gw: TestGateway
  let token: Address
  let otherToken: Address
  let dir: string
  let watcher: DepositWatcher
  let sanctions: SanctionsList
  const watcherFor = () => {
    const settings = depositSettings(
      loadConfig({
        DEPOSIT_XPUB: XPUB,
        DEPOSIT_TOKENS: `TUSD:${token}:6`,
        DEPOSIT_CHAIN_ID: '31337',
        DEPOSIT_CONFIRMATIONS: '3',
      }),
    )!
    return {
      settings,
      watcher: new DepositWatcher(gw.app.operator, settings, chain.rpcUrl, sanctions),
    }
  }

  beforeAll(async () => {
    chain = await startLocalChain()
    token = await chain.deployToken(6)
    otherToken = await chain.deployToken(6)
    dir = await mkdtemp(join(tmpdir(), 'gateway-deposits-'))
    await writeFile(join(dir, 'sanctions.txt'), '')
    sanctions = new SanctionsList(join(dir, 'sanctions.txt'))
    gw = await startTestGateway({ store: 'memory', database: 'embedded' })
    watcher = watcherFor().watcher
  }, 120_000)
  afterAll(async () => {
    await gw?.close()
    await chain?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  async function depositor(): Promise<{ accountId: string; address: Address }> {
    const accountId = await gw.account('0')
    const address = await depositAddress(gw.app.operator.sql, watcherFor().settings, accountId)
    return { accountId, address }
  }
  const statesOf = async (accountId: string) =>
    (await listPayments(gw.app.operator.sql, accountId)).map((payment) => payment.state)

  test('credited at the confirmations, once, however often and however concurrently it is read', async () => {
    const { accountId, address } = await depositor()
    await chain.transfer(token, address, 12n * UNIT + UNIT / 2n)
    await watcher.round()
    expect(await statesOf(accountId)).toEqual(['pending'])
    await chain.mine(1)
    await watcher.round()
    expect(await statesOf(accountId)).toEqual(['pending'])
    await chain.mine(1)
    await Promise.all([watcher.round(), watcher.round(), watcherFor().watcher.round()])
    expect(await statesOf(accountId)).toEqual(['credited'])
    // A restarted watcher reads the same blocks again from its cursor: nothing more.
    await watcherFor().watcher.round()
    await chain.mine(5)
    await watcher.round()
    const { snapshot, ledger } = await settledAccount(gw, accountId)
    expect(snapshot.balanceNano).toBe(12.5 * USD)
    expect(ledger.filter((row) => row.kind === 'credit')).toHaveLength(1)
    expect(snapshot.balanceNano).toBe(sumOf(ledger))
  })

  test('a reorganisation that removes a credited transfer reverses it', async () => {
    const { accountId, address } = await depositor()
    const before = await chain.snapshot()
    await chain.transfer(token, address, 5n * UNIT)
    await chain.mine(3)
    await watcher.round()
    expect(await statesOf(accountId)).toEqual(['credited'])
    // The chain goes on from before the transfer, longer than what it replaces.
    await chain.revert(before)
    await chain.mine(6)
    await watcher.round()
    expect(await statesOf(accountId)).toEqual(['reversed'])
    const { snapshot, ledger } = await settledAccount(gw, accountId)
    expect(snapshot.balanceNano).toBe(0)
    expect(ledger.map((row) => [row.kind, row.amount_nano])).toEqual([
      ['credit', 5 * USD],
      ['adjustment', -5 * USD],
    ])
  })

  test('a reorganisation that moves a credited transfer to another block and log index credits it once', async () => {
    const { accountId, address } = await depositor()
    const before = await chain.snapshot()
    const signed = await chain.signTransfer(token, address, 5n * UNIT)
    await chain.sendRaw(signed)
    await chain.mine(3)
    await watcher.round()
    expect(await statesOf(accountId)).toEqual(['credited'])
    // The chain goes on from before the transfer; the same transaction is mined again, now after
    // another transfer of the token in its block, so its log has another index there.
    await chain.revert(before)
    await chain.setAutomine(false)
    try {
      await chain.sendFiller(token)
      await chain.sendRaw(signed)
      await chain.mine(1)
    } finally {
      await chain.setAutomine(true)
    }
    await chain.mine(6)
    await watcher.round()
    await watcher.round()
    const { snapshot, ledger } = await settledAccount(gw, accountId)
    expect(snapshot.balanceNano).toBe(5 * USD)
    expect(snapshot.balanceNano).toBe(sumOf(ledger))
    const payments = await listPayments(gw.app.operator.sql, accountId)
    expect(payments.filter((payment) => payment.state === 'credited')).toHaveLength(1)
  })

  test('a transfer a reorganisation took out, mined again later at the same log index, is credited again', async () => {
    const { accountId, address } = await depositor()
    const before = await chain.snapshot()
    const signed = await chain.signTransfer(token, address, 5n * UNIT)
    await chain.sendRaw(signed)
    await chain.mine(3)
    await watcher.round()
    expect(await statesOf(accountId)).toEqual(['credited'])
    // The chain goes on from before the transfer without it for a while (the watcher sees it gone),
    // then mines the same transaction again, alone in its block: the same log index, another block.
    await chain.revert(before)
    await chain.mine(6)
    await watcher.round()
    expect(await statesOf(accountId)).toEqual(['reversed'])
    await chain.sendRaw(signed)
    await chain.mine(3)
    await watcher.round()
    await watcher.round()
    const { snapshot, ledger } = await settledAccount(gw, accountId)
    expect(snapshot.balanceNano).toBe(5 * USD)
    expect(snapshot.balanceNano).toBe(sumOf(ledger))
    expect((await statesOf(accountId)).sort()).toEqual(['credited', 'reversed'])
  })

  test('other tokens and other addresses are not credited; a listed sender is held and suspends', async () => {
    const { accountId, address } = await depositor()
    await chain.transfer(otherToken, address, 50n * UNIT)
    await chain.transfer(token, '0x000000000000000000000000000000000000dEaD', 50n * UNIT)
    await chain.mine(3)
    // The other token's transfer is logged for the operator (once), never credited.
    const lines: string[] = []
    const write = process.stderr.write
    process.stderr.write = ((chunk: string | Uint8Array) => {
      lines.push(typeof chunk === 'string' ? chunk : new TextDecoder().decode(chunk))
      return true
    }) as typeof process.stderr.write
    setLogLevel('warn')
    try {
      await watcher.round()
      await watcher.round()
    } finally {
      process.stderr.write = write
      setLogLevel('error')
    }
    const reported = lines.filter((line) => line.includes('a token that is not accepted'))
    expect(reported).toHaveLength(1)
    expect(reported[0]).toContain(otherToken)
    expect(await statesOf(accountId)).toEqual([])

    await writeFile(join(dir, 'sanctions.txt'), `${chain.sender}\n`)
    const changedAt = new Date(Date.now() + 5_000)
    await utimes(join(dir, 'sanctions.txt'), changedAt, changedAt)
    await chain.transfer(token, address, 7n * UNIT)
    await chain.mine(3)
    await watcher.round()
    expect(await statesOf(accountId)).toEqual(['held'])
    const [account] = await gw.app.operator.sql<{ status: string; suspended_reason: string }[]>`
      SELECT status, suspended_reason FROM accounts WHERE id = ${accountId}`
    expect(account).toEqual({ status: 'suspended', suspended_reason: 'sanctions' })
    expect((await settledAccount(gw, accountId)).snapshot.balanceNano).toBe(0)
    await writeFile(join(dir, 'sanctions.txt'), '')
  })
})
