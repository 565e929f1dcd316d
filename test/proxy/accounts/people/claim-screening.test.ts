// A wallet attached by POST /me/claim is screened as at a wallet sign-in: a wallet on the sanctions list
// suspends the claimed account (reason sanctions; its keys get 403 account_suspended), and every other
// account of that wallet's user; a wallet not on the list leaves the account active.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { creditAccount } from '../../../../proxy/accounts/accounts.ts'
import { createAccountless } from '../../../../proxy/accounts/people/accountless.ts'
import { usdToNano } from '../../../../shared/money.ts'
import { admin } from '../../../helpers/admin.ts'
import { startTestGateway, type TestGateway } from '../../../helpers/gateway.ts'
import { describeWith } from '../../../helpers/services.ts'
import { newWallet, signedMessage } from '../../../helpers/siwe.ts'
import type { PrivateKeyAccount } from 'viem/accounts'

describeWith(['postgres', 'redis'], 'claiming with a wallet on the sanctions list', () => {
  let gw: TestGateway
  let dir: string
  const listed = newWallet()
  const clean = newWallet()
  const hello = { model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }] }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gateway-claim-screening-'))
    const listFile = join(dir, 'sanctions.txt')
    await writeFile(listFile, `${listed.address.toLowerCase()}\n`)
    gw = await startTestGateway({
      store: 'redis',
      database: 'postgres',
      env: {
        SANCTIONS_LIST_FILE: listFile,
        PUBLIC_SITE_URL: 'http://site.test',
        SIGN_IN_ATTEMPTS_PER_MINUTE: '1000',
      },
    })
  })
  afterAll(async () => {
    await gw.close()
    await rm(dir, { recursive: true, force: true })
  })

  async function accountless() {
    const created = await createAccountless(gw.app.operator)
    await creditAccount(gw.app.operator, created.accountId, usdToNano('1')!, 'test credit')
    return created
  }
  async function claimWith(key: string, wallet: PrivateKeyAccount): Promise<Response> {
    const { nonce } = (await (await admin(gw, 'GET', '/admin/v1/auth/wallet/nonce')).json()) as {
      nonce: string
    }
    return gw.app.api.handle(
      new Request('http://gateway.test/me/claim', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ wallet: await signedMessage(wallet, nonce) }),
      }),
    )
  }
  const statusOf = async (accountId: string) =>
    (
      await gw.app.operator.sql<{ status: string; suspended_reason: string | null }[]>`
        SELECT status, suspended_reason FROM accounts WHERE id = ${accountId}`
    )[0]

  test('a listed wallet: the claimed account is suspended and its key refused with 403 account_suspended', async () => {
    const created = await accountless()
    expect((await gw.chat(created.key, hello)).status).toBe(200)
    expect((await claimWith(created.key, listed)).status).toBe(200)
    expect(await statusOf(created.accountId)).toEqual({
      status: 'suspended',
      suspended_reason: 'sanctions',
    })
    const refused = await gw.chat(created.key, hello)
    expect(refused.status).toBe(403)
    expect(refused.headers.get('x-service-error-code')).toBe('account_suspended')
  })

  test('a second account claimed by the same listed wallet is suspended too', async () => {
    const created = await accountless()
    expect((await claimWith(created.key, listed)).status).toBe(200)
    expect(await statusOf(created.accountId)).toEqual({
      status: 'suspended',
      suspended_reason: 'sanctions',
    })
  })

  test('a wallet not on the list leaves the account active', async () => {
    const created = await accountless()
    expect((await claimWith(created.key, clean)).status).toBe(200)
    expect(await statusOf(created.accountId)).toEqual({ status: 'active', suspended_reason: null })
    expect((await gw.chat(created.key, hello)).status).toBe(200)
  })
})
