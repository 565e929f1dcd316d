// Top-ups in real Chromium: by card, the owner enters an amount on the billing page, pays on the payment
// page (a local stand-in for Stripe's Checkout, which sends the signed event as Stripe does and returns
// to the billing page), and the payment shows as credited with the balance raised; by deposit, the
// owner sees the account's address, a token transfer to it on a local chain (Hardhat's node) is
// confirmed, and the deposit shows as credited.
import { afterAll, beforeAll, expect } from 'bun:test'
import { HDKey } from '@scure/bip32'
import { mnemonicToSeedSync } from '@scure/bip39'
import type { Address } from 'viem'
import { mnemonicToAccount } from 'viem/accounts'
import { startLocalChain, type LocalChain } from '../helpers/chain/local-chain.ts'
import { confirmSecrets } from '../../proxy/accounts/people/accountless.ts'
import { stripeStandIn } from '../helpers/stripe.ts'
import {
  browserTest,
  describeBrowser,
  seriousViolations,
  signedInAs,
  startSite,
  type Site,
} from './helpers/browser.ts'

const SECRET = 'whsec_browser'
const MNEMONIC = 'test test test test test test test test test test test junk'
const XPUB = HDKey.fromMasterSeed(mnemonicToSeedSync(MNEMONIC)).derive(
  "m/44'/60'/0'/0",
).publicExtendedKey

describeBrowser(
  'card top-up in the dashboard',
  () => {
    let site: Site
    let standIn: ReturnType<typeof stripeStandIn>
    let chain: LocalChain
    let token: Address
    beforeAll(async () => {
      standIn = stripeStandIn()
      chain = await startLocalChain()
      token = await chain.deployToken(6)
      site = await startSite({
        database: 'embedded',
        env: {
          STRIPE_SECRET_KEY: 'sk_test_browser',
          STRIPE_WEBHOOK_SECRET: SECRET,
          STRIPE_API_URL: standIn.url,
          DEPOSIT_XPUB: XPUB,
          DEPOSIT_TOKENS: `TUSD:${token}:6`,
          DEPOSIT_CHAIN_ID: '31337',
          DEPOSIT_CONFIRMATIONS: '3',
          DEPOSIT_RPC_URL: chain.rpcUrl,
          DEPOSIT_POLL_MS: '200',
        },
      })
      standIn.webhook = { url: `${site.siteUrl}/webhooks/stripe`, secret: SECRET }
    })
    /** A new accountless account with its secrets confirmed, its owner on the billing page. */
    async function ownerOnBilling() {
      const accountId = await site.gw.account('0')
      await confirmSecrets(site.gw.app.operator.sql, accountId, Date.now())
      const page = await signedInAs(site, accountId, 'owner', `owner-${accountId}@people.test`)
      await page.goto('/dashboard/billing')
      return { accountId, page }
    }
    afterAll(async () => {
      await site?.close()
      standIn?.server.stop(true)
      await chain?.stop()
    })

    browserTest(
      'the owner pays by card and comes back to a credited payment and a higher balance',
      () => site,
      async () => {
        const { accountId, page } = await ownerOnBilling()
        const amount = page.getByLabel('Amount (USD)')
        await amount.fill('2')
        await page.getByRole('button', { name: 'Pay by card' }).click()
        // Below the smallest top-up: the field says so, and the page stays.
        await amount.and(page.locator('[aria-invalid="true"]')).waitFor()
        expect(await page.getByText('a top-up is between USD 5 and 10000').count()).toBe(1)

        await amount.fill('25')
        await page.getByRole('button', { name: 'Pay by card' }).click()
        await page.getByRole('heading', { name: 'Test checkout' }).waitFor()
        await page.getByRole('button', { name: 'Pay' }).click()
        await page.waitForURL(/\/dashboard\/billing\?checkout=success$/)
        await page.getByText('Payment sent').waitFor()
        await page.getByRole('row', { name: /Card.*\$25\.00.*Credited/ }).waitFor()
        await page.getByText('$25.00').first().waitFor()
        expect(await seriousViolations(page)).toEqual([])
      },
    )

    browserTest(
      "the owner sees the account's own deposit address (QR code, chain, tokens), and a confirmed transfer to it is credited",
      () => site,
      async () => {
        const { accountId, page } = await ownerOnBilling()
        await page.getByRole('button', { name: 'Show deposit address' }).click()
        await page.getByRole('img', { name: 'QR code of the deposit address' }).waitFor()
        const [row] = await site.gw.app.operator.sql<{ derivation_index: number }[]>`
          SELECT derivation_index FROM deposit_addresses WHERE account_id = ${accountId}`
        const address = mnemonicToAccount(MNEMONIC, { addressIndex: row!.derivation_index }).address
        await page.getByText(address, { exact: true }).waitFor()
        expect(await page.getByText('once it has 3 confirmations').count()).toBe(1)
        expect(await seriousViolations(page)).toEqual([])

        // A transfer to the address, confirmed on the local chain, shows as a credited deposit.
        await chain.transfer(token, address, 10_000_000n)
        await chain.mine(3)
        const credited = page.getByRole('row', { name: /Deposit.*\$10\.00.*Credited/ })
        for (let attempt = 0; attempt < 30 && (await credited.count()) === 0; attempt++) {
          await Bun.sleep(300)
          await page.reload()
          await page.getByRole('heading', { name: 'Payments' }).waitFor()
        }
        await credited.waitFor()
      },
    )
  },
  'embedded',
)
