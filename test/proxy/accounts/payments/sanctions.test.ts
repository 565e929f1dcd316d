// Sanctions screening at wallet sign-in: a wallet on the list file suspends the user's accounts (reason
// sanctions; their keys get 403 account_suspended), the session still opens for reading and support, and
// the list is read again when the file changes.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { PrivateKeyAccount } from 'viem/accounts'
import { createKey } from '../../../../proxy/accounts/keys.ts'
import { admin } from '../../../helpers/admin.ts'
import { startTestGateway, type TestGateway } from '../../../helpers/gateway.ts'
import { newWallet, signedMessage } from '../../../helpers/siwe.ts'

let gw: TestGateway
let dir: string
let listFile: string
const listed = newWallet()
const clean = newWallet()
/** Listed in the second version of the file; signs in only after the file is gone. */
const later = newWallet()

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gateway-sanctions-'))
  listFile = join(dir, 'sanctions.txt')
  await writeFile(
    listFile,
    `# screened addresses\n${listed.address.toLowerCase()}  # a listed wallet\n`,
  )
  gw = await startTestGateway({
    store: 'memory',
    database: 'embedded',
    env: { SANCTIONS_LIST_FILE: listFile, SIGN_IN_ATTEMPTS_PER_MINUTE: '1000' },
  })
})
afterAll(async () => {
  await gw.close()
  await rm(dir, { recursive: true, force: true })
})

async function signIn(wallet: PrivateKeyAccount) {
  const nonce = (await (await admin(gw, 'GET', '/admin/v1/auth/wallet/nonce')).json()) as {
    nonce: string
  }
  const response = await admin(gw, 'POST', '/admin/v1/auth/wallet', {
    body: await signedMessage(wallet, nonce.nonce),
  })
  expect(response.status).toBe(200)
  return (await response.json()) as { account: { id: string } }
}
const statusOf = async (accountId: string) =>
  (
    await gw.app.operator.sql<{ status: string; suspended_reason: string | null }[]>`
      SELECT status, suspended_reason FROM accounts WHERE id = ${accountId}`
  )[0]

test('a listed wallet signs in to a suspended account whose keys are refused', async () => {
  const { account } = await signIn(listed)
  expect(await statusOf(account.id)).toEqual({ status: 'suspended', suspended_reason: 'sanctions' })
  const { key } = await createKey(gw.app.operator, account.id, { name: 'k' })
  const refused = await gw.chat(key, {
    model: 'test/cheap',
    messages: [{ role: 'user', content: 'hi' }],
  })
  expect(refused.status).toBe(403)
  expect(refused.headers.get('x-service-error-code')).toBe('account_suspended')
})

test('a wallet not on the list stays active, until the list file names it', async () => {
  const { account } = await signIn(clean)
  expect(await statusOf(account.id)).toEqual({ status: 'active', suspended_reason: null })
  await writeFile(listFile, `${listed.address}\n${clean.address}\n${later.address}\n`)
  // A later modification time than the first write, whatever the file system's resolution.
  const changedAt = new Date(Date.now() + 5_000)
  await utimes(listFile, changedAt, changedAt)
  await signIn(clean)
  expect(await statusOf(account.id)).toEqual({ status: 'suspended', suspended_reason: 'sanctions' })
})

test('a list file that cannot be read keeps the last list', async () => {
  await rm(listFile)
  const { account } = await signIn(later)
  expect(await statusOf(account.id)).toMatchObject({ status: 'suspended' })
})
