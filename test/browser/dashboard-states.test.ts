// The dashboard when things are not as expected, in a real browser: a card whose read fails says so in
// place, with Try again, and nothing else on the page breaks.
import { afterAll, beforeAll, expect } from 'bun:test'
import type { Page } from 'playwright-core'
import {
  browserTest,
  describeBrowser,
  signedInAs,
  startSite,
  type Site,
} from './helpers/browser.ts'

/** A page signed in as the owner of a new account holding USD 5. */
async function ownerPage(site: Site): Promise<{ page: Page; accountId: string }> {
  const accountId = await site.gw.account('5')
  return { page: await signedInAs(site, accountId, 'owner'), accountId }
}

/** Answers the admin API's `path` with a server error until the returned function is called. */
async function failing(page: Page, path: string): Promise<() => Promise<void>> {
  const pattern = new RegExp(`/admin/v1${path}(\\?.*)?$`)
  await page.route(pattern, (route) =>
    route.fulfill({
      status: 500,
      contentType: 'application/json',
      body: JSON.stringify({
        error: { code: 'internal_error', message: 'Something went wrong on our side.' },
      }),
    }),
  )
  return () => page.unroute(pattern)
}

describeBrowser(
  'dashboard states',
  () => {
    let site: Site
    beforeAll(async () => {
      site = await startSite({ database: 'embedded' })
    })
    afterAll(() => site?.close())

    browserTest(
      'the payments card says its read failed, and Try again reads it again',
      () => site,
      async () => {
        const { page } = await ownerPage(site)
        const recover = await failing(page, '/billing/payments')
        await page.goto('/dashboard/billing')
        const payments = page.locator('section, .card').filter({
          has: page.getByRole('heading', { name: 'Payments' }),
        })
        const notice = payments.getByRole('alert')
        await notice.waitFor()
        expect(await notice.textContent()).toContain('Something went wrong on our side.')
        // The rest of the page still works.
        await page.getByRole('heading', { name: 'Ledger' }).waitFor()

        await recover()
        await notice.getByRole('button', { name: 'Try again' }).click()
        await payments.getByText('No payments yet.').waitFor()
      },
    )
  },
  'embedded',
)
