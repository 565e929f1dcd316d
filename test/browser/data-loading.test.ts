// How the dashboard reads, in a real browser: a page's data is asked for once, while the page's chunk
// is still loading (its route's preload), also with filters from the address; a failed read shows its
// error in its own card, and Try again reads it again; Refresh keeps the answer on screen until the new
// one is in; going back reads a page's data again; Load more appends older entries, which new filters
// drop; the model picker is a labelled combobox whose hint and refusal are wired to it. Signed out, a
// page asks for nothing but the session before it sends the user to sign in.
import { afterAll, beforeAll, expect } from 'bun:test'
import type { Page, Request } from 'playwright-core'
import { creditAccount } from '../../proxy/accounts/accounts.ts'
import { usdToNano } from '../../shared/money.ts'
import { browserTest, describeBrowser, ownerPage, startSite, type Site } from './helpers/browser.ts'

/** Every request the page makes from now on, with when it was made. */
function recordRequests(page: Page): { path: string; at: number }[] {
  const made: { path: string; at: number }[] = []
  page.on('request', (request: Request) => {
    const url = new URL(request.url())
    made.push({ path: url.pathname + url.search, at: Date.now() })
  })
  return made
}

/** Holds a page's chunk for `ms`; answers when the chunk was let through. */
async function holdChunk(page: Page, name: string, ms: number): Promise<() => number | undefined> {
  let released: number | undefined
  await page.route(new RegExp(`/assets/${name}-[\\w-]+\\.js$`), async (route) => {
    await new Promise((resolve) => setTimeout(resolve, ms))
    released = Date.now()
    await route.continue()
  })
  return () => released
}

describeBrowser(
  'dashboard data loading',
  () => {
    let site: Site
    beforeAll(async () => {
      site = await startSite({ database: 'embedded' })
    })
    afterAll(() => site?.close())

    browserTest(
      "a page's data is asked for once, while its chunk is still loading",
      () => site,
      async () => {
        const { page } = await ownerPage(site)
        await page.goto('/dashboard')
        await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()

        // Following a link.
        const chunkReleased = await holdChunk(page, 'keys', 700)
        const made = recordRequests(page)
        await page.getByRole('link', { name: 'API keys' }).click()
        await page.getByText('No keys yet').waitFor()
        // The overview read the keys a moment ago (its next steps depend on them): not asked again.
        expect(made.filter((request) => request.path === '/admin/v1/keys').length).toBeLessThan(2)
        for (const path of ['/admin/v1/guardrails', '/admin/v1/keys/defaults'])
          expect(made.filter((request) => request.path === path).length).toBe(1)
        expect(made.find((request) => request.path === '/admin/v1/guardrails')!.at).toBeLessThan(
          chunkReleased()!,
        )

        // Loading the address, filters included.
        const activityReleased = await holdChunk(page, 'activity', 700)
        made.length = 0
        await page.goto('/dashboard/activity?status=error')
        await page.getByText('No requests match these filters').waitFor()
        const firstPage = made.filter(
          (request) => request.path === '/admin/v1/activity?status=error',
        )
        expect(firstPage.length).toBe(1)
        expect(firstPage[0]!.at).toBeLessThan(activityReleased()!)
      },
    )

    browserTest(
      'signed out, a page asks for the session only, then goes to sign in',
      () => site,
      async () => {
        const { page } = await site.open()
        const made = recordRequests(page)
        for (const path of ['/dashboard', '/dashboard/billing']) {
          made.length = 0
          await page.goto(path)
          await page.waitForURL('**/sign-in**')
          await page.waitForLoadState('networkidle')
          const reads = made.filter((request) => request.path.startsWith('/admin/v1/'))
          expect({ path, reads: reads.map((request) => request.path) }).toEqual({
            path,
            reads: ['/admin/v1/me'],
          })
        }
      },
    )

    browserTest(
      'a failed read shows its error in its own card, and Try again reads it again',
      () => site,
      async () => {
        const { page } = await ownerPage(site)
        let reads = 0
        await page.route('**/admin/v1/activity/summary', async (route) => {
          reads += 1
          if (reads === 1)
            await route.fulfill({
              status: 503,
              contentType: 'application/json',
              body: JSON.stringify({
                error: { code: 'internal_error', message: 'The summary is resting.' },
              }),
            })
          else await route.continue()
        })
        await page.goto('/dashboard')
        const day = page.locator('section.card', {
          has: page.getByRole('heading', { name: 'Last 24 hours' }),
        })
        await day.getByText('The summary is resting.').waitFor()
        // The other card is not held back by the failure.
        await page
          .locator('section.card', { has: page.getByRole('heading', { name: 'Balance' }) })
          .getByText('Available')
          .waitFor()
        await day.getByRole('button', { name: 'Try again' }).click()
        await day.getByText('Requests').waitFor()
        expect(await day.getByText('The summary is resting.').count()).toBe(0)
        expect(reads).toBe(2)
      },
    )

    browserTest(
      'Refresh keeps the balance on screen until the new one is in, and the focus on itself',
      () => site,
      async () => {
        const { page, accountId } = await ownerPage(site)
        await page.goto('/dashboard/billing')
        const balance = page.locator('section.card', {
          has: page.getByRole('heading', { name: 'Balance' }),
        })
        await balance.getByText('$5.00').first().waitFor()
        await creditAccount(site.gw.app.operator, accountId, usdToNano('2')!, 'browser test')

        let release!: () => void
        const released = new Promise<void>((resolve) => (release = resolve))
        let reads = 0
        await page.route('**/admin/v1/billing', async (route) => {
          reads++
          await released
          await route.continue()
        })
        const refresh = balance.getByRole('button', { name: 'Refresh' })
        const focused = () => refresh.evaluate((button) => button === document.activeElement)
        // From the keyboard: pressed again while busy, it does nothing, and it keeps the focus throughout.
        await refresh.focus()
        await page.keyboard.press('Enter')
        expect(await refresh.getAttribute('aria-busy')).toBe('true')
        await page.keyboard.press('Enter')
        await page.waitForTimeout(300)
        expect(await focused()).toBe(true)
        expect(await balance.getByText('$5.00').count()).toBeGreaterThan(0)
        expect(await balance.getByRole('status').count()).toBe(0)
        release()
        await balance.getByText('$7.00').first().waitFor()
        expect(await refresh.getAttribute('aria-busy')).toBeNull()
        expect(await focused()).toBe(true)
        expect(reads).toBe(1)
      },
    )

    browserTest(
      'going back to a page reads its data again',
      () => site,
      async () => {
        const { page, accountId } = await ownerPage(site)
        await page.goto('/dashboard/billing')
        const balance = page.locator('section.card', {
          has: page.getByRole('heading', { name: 'Balance' }),
        })
        await balance.getByText('$5.00').first().waitFor()
        await page.getByRole('link', { name: 'API keys' }).click()
        await page.getByRole('heading', { level: 1, name: 'Keys' }).waitFor()
        await creditAccount(site.gw.app.operator, accountId, usdToNano('2')!, 'browser test')
        const made = recordRequests(page)
        await page.goBack()
        await balance.getByText('$7.00').first().waitFor()
        expect(made.filter((request) => request.path === '/admin/v1/billing').length).toBe(1)
      },
    )

    browserTest(
      'Load more appends older ledger entries, and new filters start again from the first page',
      () => site,
      async () => {
        const { page, accountId } = await ownerPage(site)
        // With the opening credit: 52 entries, one full page of 50 and two more.
        for (let index = 0; index < 51; index++)
          await creditAccount(
            site.gw.app.operator,
            accountId,
            usdToNano('0.01')!,
            `credit ${index}`,
          )
        await page.goto('/dashboard/billing')
        const ledger = page.locator('section.card', {
          has: page.getByRole('heading', { name: 'Ledger' }),
        })
        await ledger.getByText('50 entries shown', { exact: true }).waitFor()
        await ledger.getByRole('button', { name: 'Load more' }).click()
        await ledger.getByText('52 entries shown: that is all.').waitFor()
        expect(await ledger.locator('tbody tr').count()).toBe(52)

        await ledger.getByLabel('Entries').selectOption('credit')
        await ledger.getByRole('button', { name: 'Apply filters' }).click()
        await page.waitForURL(/kind=credit/)
        await ledger.getByText('50 entries shown', { exact: true }).waitFor()
        expect(await ledger.locator('tbody tr').count()).toBe(50)
      },
    )

    browserTest(
      "the model picker is a labelled combobox with its hint, and the server's refusal under it",
      () => site,
      async () => {
        const { page } = await ownerPage(site)
        await page.goto('/dashboard/routing')
        const picker = page.getByRole('combobox', { name: "Models the account's keys may call" })
        const described = async () => {
          const ids = ((await picker.getAttribute('aria-describedby')) ?? '')
            .split(' ')
            .filter(Boolean)
          return Promise.all(ids.map((id) => page.locator(`[id="${id}"]`).textContent()))
        }
        await picker.fill('cheap')
        expect(await picker.getAttribute('aria-expanded')).toBe('true')
        await page.getByRole('option', { name: /test\/cheap/ }).waitFor()
        await picker.press('Enter')
        await page
          .getByRole('list', { name: "Models the account's keys may call: chosen" })
          .getByText('test/cheap')
          .waitFor()
        expect(await described()).toEqual([
          'Exact model IDs. A key may call a model only when the key, its guardrail and this list all allow it.',
        ])

        // A model-shaped ID the catalog does not list may be typed; the server refuses it, under the field.
        await picker.fill('nobody/nothing')
        await picker.press('Enter')
        await page.getByRole('button', { name: 'Save routing' }).click()
        await page.getByText('unknown model IDs: nobody/nothing').waitFor()
        expect(await picker.getAttribute('aria-invalid')).toBe('true')
        const descriptions = await described()
        expect(descriptions.length).toBe(2)
        expect(descriptions[1]).toContain('unknown model IDs: nobody/nothing')
      },
    )

    browserTest(
      'the model picker highlights nothing until Down, which goes to the first match, and Enter picks what is highlighted',
      () => site,
      async () => {
        const { page } = await ownerPage(site)
        await page.goto('/dashboard/routing')
        const picker = page.getByRole('combobox', { name: "Models the account's keys may call" })
        // Typed text that is model-shaped is offered after the listed match: `test/cheap`, then `test/ch`.
        await picker.fill('test/ch')
        const options = page.getByRole('option')
        await options.filter({ hasText: 'test/cheap' }).waitFor()
        expect(await picker.getAttribute('aria-activedescendant')).toBeNull()
        await picker.press('ArrowDown')
        const first = options.first()
        expect(await first.textContent()).toContain('test/cheap')
        expect(await picker.getAttribute('aria-activedescendant')).toBe(
          await first.getAttribute('id'),
        )
        expect(await first.getAttribute('class')).toContain('active')
        await picker.press('Enter')
        const chosen = page.getByRole('list', {
          name: "Models the account's keys may call: chosen",
        })
        await chosen.getByText('test/cheap', { exact: true }).waitFor()
        expect(await chosen.getByText('test/ch', { exact: true }).count()).toBe(0)
        // Up from no highlight goes to the last option, here the typed ID.
        await picker.fill('test/ch')
        await picker.press('ArrowUp')
        expect(await options.last().textContent()).toContain('not in the list')
        expect(await picker.getAttribute('aria-activedescendant')).toBe(
          await options.last().getAttribute('id'),
        )
      },
    )
  },
  'embedded',
)
