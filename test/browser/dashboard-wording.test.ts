// What a user reads on the way through the dashboard: each refusal or confirmation said once, counts
// in the right number, and dates that stay on one line on a phone.
import { afterAll, beforeAll, expect } from 'bun:test'
import type { Page } from 'playwright-core'
import { creditAccount } from '../../proxy/accounts/accounts.ts'
import { createAccountless } from '../../proxy/accounts/people/accountless.ts'
import { usdToNano } from '../../shared/money.ts'
import { testModel } from '../helpers/gateway.ts'
import {
  accountOf,
  browserTest,
  chat,
  describeBrowser,
  signInByEmail,
  signedInAs,
  startSite,
  type Site,
} from './helpers/browser.ts'

/** How many times `text` occurs in the page's main content. */
async function occurrences(page: Page, selector: string, text: string): Promise<number> {
  const content = await page.locator(selector).innerText()
  return content.split(text).length - 1
}

describeBrowser('dashboard wording and layout', () => {
  let site: Site
  beforeAll(async () => {
    site = await startSite({ models: [testModel('test/cheap', 'fake')] })
  })
  afterAll(() => site?.close())

  browserTest(
    'the sign-in confirmation takes the focus and says once how long the link lasts',
    () => site,
    async () => {
      const { page } = await site.open()
      await page.goto('/sign-in')
      await page.getByLabel('E-mail address').fill('once@people.test')
      await page.getByRole('button', { name: 'Send sign-in link' }).click()
      const notice = page.getByRole('status').filter({ hasText: 'Check your inbox' })
      await notice.waitFor()
      expect((await notice.innerText()).match(/works once/g)).toHaveLength(1)
      expect(await notice.innerText()).toContain('You can close this tab.')
      // The keyboard stays on the confirmation, not back at the top of the page.
      expect(
        await page.evaluate(() => {
          const focused = document.activeElement
          return focused !== document.body && !!focused?.textContent?.includes('Check your inbox')
        }),
      ).toBe(true)
      await site.smtp.next('once@people.test')
    },
  )

  browserTest(
    'free chat that cannot answer shows one notice with the reason',
    () => site,
    async () => {
      const { page } = await site.open()
      await signInByEmail(site, page, 'free-chat@people.test')
      const message =
        'Free chat is temporarily unavailable (no candidate can serve it right now). No paid request was made; you can choose paid chat to continue with a paid model.'
      await page.route('**/admin/v1/playground/chat', (route) =>
        route.fulfill({
          status: 503,
          contentType: 'application/json',
          body: JSON.stringify({ error: { code: 'auto_unresolvable', message, param: 'model' } }),
        }),
      )
      await page.goto('/dashboard/playground')
      await page.getByLabel('Message', { exact: true }).fill('hello')
      await page.getByRole('button', { name: 'Send', exact: true }).click()
      const notice = page.locator('.chat-card .notice')
      await notice.first().waitFor()
      expect(await notice.count()).toBe(1)
      expect(await notice.innerText()).toContain('Free chat cannot answer right now')
      expect(await notice.innerText()).toContain('no candidate can serve it right now')
      expect(await occurrences(page, 'main', 'No paid request was made')).toBe(1)
    },
  )

  browserTest(
    'paid chat speaks of paid chat only: no free model, and the key it is charged to and where its spending shows',
    () => site,
    async () => {
      // Signed in as the owner of an account with an identity (without the sign-in form, whose
      // per-address limit the other tests of this file use up).
      const accountId = await site.gw.account('5')
      await site.gw.app.operator.sql`UPDATE accounts SET kind = 'identity' WHERE id = ${accountId}`
      const page = await signedInAs(site, accountId, 'owner')
      await page.goto('/dashboard/playground')
      await page.getByText('No messages yet').waitFor()
      await page.getByLabel('Paid chat (charged to your balance)').check()
      const note = page.getByText("Paid chat uses the account's key named Playground")
      await note.waitFor()
      expect(await occurrences(page, '.chat-card', 'Free messages are answered by')).toBe(0)
      // Its spending is where spend by key is shown (the Keys page shows its limits only).
      expect(await note.getByRole('link', { name: 'Usage' }).getAttribute('href')).toBe(
        '/dashboard/usage',
      )
    },
  )

  browserTest(
    "the overview's last 24 hours say one error and one token in the singular",
    () => site,
    async () => {
      const { page } = await site.open()
      await signInByEmail(site, page, 'one-error@people.test')
      const totals = {
        requests: 2,
        errors: 1,
        inputTokens: 0,
        outputTokens: 1,
        costNano: 0,
        costUsd: '0',
        chargedNano: 0,
        chargedUsd: '0',
      }
      await page.route('**/admin/v1/activity/summary', (route) =>
        route.fulfill({
          contentType: 'application/json',
          body: JSON.stringify({ from: '', to: '', hours: [], totals }),
        }),
      )
      await page.reload()
      const day = page.locator('.card', { hasText: 'Last 24 hours' })
      await day.getByText('spent,').waitFor()
      expect(await day.getByText('spent,').innerText()).toBe('$0.00 spent, 1 error, 1 token')
    },
  )

  browserTest(
    'usage names one model as one line',
    () => site,
    async () => {
      const { page } = await site.open()
      await signInByEmail(site, page, 'usage@people.test')
      await creditAccount(
        site.gw.app.operator,
        await accountOf(page),
        usdToNano('5')!,
        'usage test',
      )
      await page.goto('/dashboard/keys')
      await page.getByRole('button', { name: 'Create key' }).click()
      await page.getByLabel('Name', { exact: true }).fill('usage key')
      await page.getByRole('button', { name: 'Create', exact: true }).click()
      const key = await page.getByLabel('API key', { exact: true }).inputValue()
      const answer = await chat(site, key, {
        model: 'test/cheap',
        messages: [{ role: 'user', content: 'hello' }],
      })
      expect(answer.status).toBe(200)
      await page.goto('/dashboard/usage')
      const summary = page.getByText(/^Spend per model over the last 30 days/)
      const deadline = Date.now() + 10_000
      while ((await summary.count()) === 0) {
        if (Date.now() > deadline) throw new Error('the request never reached the usage page')
        await page.getByRole('button', { name: 'Refresh' }).click()
        await page.waitForTimeout(250)
      }
      expect(await summary.first().innerText()).toContain('1 line;')
    },
  )

  browserTest(
    'a member joined date stays on one line on a phone',
    () => site,
    async () => {
      const { page } = await site.open()
      await signInByEmail(site, page, 'phone-owner@people.test')
      await page.setViewportSize({ width: 390, height: 844 })
      await page.goto('/dashboard/team')
      const joined = page
        .getByRole('row', { name: /phone-owner@people\.test/ })
        .getByRole('cell')
        .nth(2)
      await joined.waitFor()
      const lines = await joined.evaluate((cell) => {
        const range = document.createRange()
        range.selectNodeContents(cell)
        return new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size
      })
      expect(lines).toBe(1)
    },
  )

  browserTest(
    'sending or cancelling a new ticket gives the focus back to New ticket',
    () => site,
    async () => {
      const { page } = await site.open()
      await signInByEmail(site, page, 'ticket-focus@people.test')
      await page.goto('/dashboard/support')
      const newTicket = page.getByRole('button', { name: 'New ticket' })
      const focusedText = () => page.evaluate(() => document.activeElement?.textContent?.trim())
      await newTicket.focus()
      await page.keyboard.press('Enter')
      await page.getByRole('button', { name: 'Cancel' }).focus()
      await page.keyboard.press('Enter')
      expect(await focusedText()).toBe('New ticket')
      await page.keyboard.press('Enter')
      await page.getByLabel('Subject').fill('Focus after sending')
      await page.getByLabel('Message', { exact: true }).fill('Where does the keyboard go?')
      await page.getByRole('button', { name: 'Send', exact: true }).focus()
      await page.keyboard.press('Enter')
      await page.getByRole('heading', { name: 'Focus after sending' }).waitFor()
      expect(await focusedText()).toBe('New ticket')
    },
  )

  browserTest(
    'a ticket of an account without an e-mail address is confirmed as answered here only',
    () => site,
    async () => {
      const { linkSecret } = await createAccountless(site.gw.app.operator)
      const { page } = await site.open()
      await page.goto(`/dashboard/support#link=${linkSecret}`)
      await page.getByRole('button', { name: 'New ticket' }).click()
      await page.getByLabel('Subject').fill('No address')
      await page.getByLabel('Message', { exact: true }).fill('Where do answers go?')
      await page.getByRole('button', { name: 'Send', exact: true }).click()
      const toast = page.getByRole('status').filter({ hasText: 'Ticket sent.' })
      await toast.waitFor()
      expect(await toast.innerText()).toBe('Ticket sent. Support answers here.')
    },
  )

  browserTest(
    'a secret copy button names an acronym as written',
    () => site,
    async () => {
      const { page } = await site.open()
      await signInByEmail(site, page, 'copy-name@people.test')
      await page.goto('/dashboard/keys')
      await page.getByRole('button', { name: 'Create key' }).click()
      await page.getByLabel('Name', { exact: true }).fill('copy key')
      await page.getByRole('button', { name: 'Create', exact: true }).click()
      await page.getByLabel('API key', { exact: true }).waitFor()
      expect(await page.getByRole('button', { name: 'Copy API key', exact: true }).count()).toBe(1)
    },
  )

  browserTest(
    "an accountless account's notices lead to the Team page's claim steps",
    () => site,
    async () => {
      const { linkSecret } = await createAccountless(site.gw.app.operator)
      const { page } = await site.open()
      await page.goto(`/dashboard#link=${linkSecret}`)
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
      await page.goto('/dashboard/billing')
      const alerts = page.locator('.alerts')
      await alerts.getByText('Alerts need an e-mail address or a wallet').waitFor()
      await alerts.getByRole('link', { name: 'the Team page' }).click()
      await page.getByRole('heading', { level: 1, name: 'Team' }).waitFor()
      await page.getByLabel('Your e-mail address').waitFor()
      // The notice above every page says where recovery is set up, too.
      await page.goto('/dashboard/usage')
      await page.getByRole('link', { name: 'attach one on the Team page' }).click()
      await page.getByRole('heading', { level: 1, name: 'Team' }).waitFor()
    },
  )

  browserTest(
    'the overview suggests creating an API key only while the account has none it can use',
    () => site,
    async () => {
      // Setup made a key: the next steps do not ask for another.
      const { linkSecret } = await createAccountless(site.gw.app.operator)
      const { page } = await site.open()
      await page.goto(`/dashboard#link=${linkSecret}`)
      const steps = page.locator('.card', { hasText: 'Next steps' })
      await steps.getByRole('link', { name: 'Try a model in the playground' }).waitFor()
      expect(await steps.getByRole('link', { name: 'Create an API key' }).count()).toBe(0)
      // An account signed up by e-mail has no key yet: the first step is to make one.
      const other = await site.open()
      await signInByEmail(site, other.page, 'first-key@people.test')
      const otherSteps = other.page.locator('.card', { hasText: 'Next steps' })
      await otherSteps.getByRole('link', { name: 'Create an API key' }).waitFor()
    },
  )

  browserTest(
    'activity and ledger times name the time zone they are in, without a season (a list holds both)',
    () => site,
    async () => {
      const context = await site.browser.newContext({
        baseURL: site.siteUrl,
        timezoneId: 'America/Los_Angeles',
      })
      try {
        const page = await context.newPage()
        await signInByEmail(site, page, 'time-zone@people.test')
        for (const path of ['/dashboard/activity', '/dashboard/billing']) {
          await page.goto(path)
          // "PT", not "PST" or "PDT": a summer time in a winter list is shown in daylight time.
          await page.getByLabel('From (PT)', { exact: true }).waitFor()
          await page.getByLabel('To (PT)', { exact: true }).waitFor()
        }
        await creditAccount(site.gw.app.operator, await accountOf(page), usdToNano('1')!, 'zone')
        await page.reload()
        await page.getByRole('columnheader', { name: 'Time (PT)', exact: true }).waitFor()
      } finally {
        await context.close()
      }
    },
  )

  browserTest(
    'a daily cap above the monthly cap, typed or the default, is pointed out',
    () => site,
    async () => {
      const { page } = await site.open()
      await signInByEmail(site, page, 'caps@people.test')
      await page.goto('/dashboard/keys')
      await page.getByRole('button', { name: 'Create key' }).click()
      const note = page.getByText('so the monthly cap stops the key first')
      await page.getByLabel('Daily spend cap (USD)').fill('50')
      await page.getByLabel('Monthly spend cap (USD)').fill('20')
      await note.waitFor()
      expect(await note.innerText()).toStartWith('The daily cap is above the monthly cap, so')
      await page.getByLabel('Daily spend cap (USD)').fill('5')
      await note.waitFor({ state: 'detached' })
      // Left empty, the monthly cap is the default for new keys ($500 here): a daily cap above it too.
      await page.getByLabel('Monthly spend cap (USD)').fill('')
      await page.getByLabel('Daily spend cap (USD)').fill('600')
      await note.waitFor()
      expect(await note.innerText()).toStartWith(
        'The daily cap is above the default monthly cap for new keys ($500.00), so',
      )
      await page.getByLabel('Daily spend cap (USD)').fill('')
      await note.waitFor({ state: 'detached' })
    },
  )
})

describeBrowser('dashboard navigation by keyboard', () => {
  let site: Site
  beforeAll(async () => {
    site = await startSite({ models: [testModel('test/cheap', 'fake')] })
  })
  afterAll(() => site?.close())

  browserTest(
    'a page opened from the navigation takes the focus',
    () => site,
    async () => {
      const { page } = await site.open()
      await signInByEmail(site, page, 'keyboard-nav@people.test')
      await page.setViewportSize({ width: 390, height: 844 })
      await page.getByRole('link', { name: 'Activity', exact: true }).focus()
      await page.keyboard.press('Enter')
      await page.getByRole('heading', { level: 1, name: 'Activity' }).waitFor()
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('main')
      await page.keyboard.press('Tab')
      expect(
        await page.evaluate(() => document.activeElement?.closest('main')?.id ?? 'outside'),
      ).toBe('main')
      // A filter changes the address's query only: the focus stays on the control.
      await page.getByLabel('Status').selectOption({ label: 'Failed (400 and above)' })
      await page.getByRole('button', { name: 'Apply filters' }).focus()
      await page.keyboard.press('Enter')
      await page.waitForURL(/status=error/)
      expect(await page.evaluate(() => document.activeElement?.textContent?.trim())).toBe(
        'Apply filters',
      )
    },
  )
})
