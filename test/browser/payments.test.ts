// A card top-up in real Chromium: the owner enters an amount on the billing page, pays on the payment
// page (a local stand-in for Stripe's Checkout, which sends the signed event as Stripe does and returns
// to the billing page), and the payment shows as credited with the balance raised.
import { afterAll, beforeAll, expect } from 'bun:test'
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

describeBrowser(
  'card top-up in the dashboard',
  () => {
    let site: Site
    let standIn: ReturnType<typeof stripeStandIn>
    beforeAll(async () => {
      standIn = stripeStandIn()
      site = await startSite({
        database: 'embedded',
        env: {
          STRIPE_SECRET_KEY: 'sk_test_browser',
          STRIPE_WEBHOOK_SECRET: SECRET,
          STRIPE_API_URL: standIn.url,
        },
      })
      standIn.webhook = { url: `${site.siteUrl}/webhooks/stripe`, secret: SECRET }
    })
    afterAll(async () => {
      await site?.close()
      standIn?.server.stop(true)
    })

    browserTest(
      'the owner pays by card and comes back to a credited payment and a higher balance',
      () => site,
      async () => {
        const accountId = await site.gw.account('0')
        await confirmSecrets(site.gw.app.operator.sql, accountId, Date.now())
        const page = await signedInAs(site, accountId, 'owner', `owner-${accountId}@people.test`)
        await page.goto('/dashboard/billing')
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
  },
  'embedded',
)
