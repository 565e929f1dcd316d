// The dashboard in a real browser, as a user goes through it: sign in by magic link (read from the test
// SMTP server), create a key, use it through the API, find the request in Activity and in the usage
// chart, rotate and revoke the key; every page passes axe-core and survives a hard refresh.
import { afterAll, beforeAll, expect } from 'bun:test'
import type { Page } from 'playwright-core'
import { creditAccount } from '../../proxy/accounts/accounts.ts'
import { usdToNano } from '../../shared/money.ts'
import { accountOf, browserTest, chat, describeBrowser, seriousViolations, signInByEmail, startSite, type Site } from './helpers/browser.ts'

const hello = { model: 'test/cheap', messages: [{ role: 'user', content: 'hello' }] }

const PAGES = [
  '/dashboard',
  '/dashboard/keys',
  '/dashboard/billing',
  '/dashboard/team',
  '/dashboard/activity',
  '/dashboard/usage',
  '/dashboard/guardrails',
  '/dashboard/routing',
  '/dashboard/presets',
  '/dashboard/playground',
  '/dashboard/support',
]

/** Retries `check` (reloading with the page's Refresh button when it has one) until it passes. */
async function eventually(page: Page, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    const refresh = page.getByRole('button', { name: 'Refresh' })
    if (await refresh.count()) await refresh.first().click()
    else await page.reload()
    await page.waitForTimeout(250)
  }
}

describeBrowser('dashboard in the browser', () => {
  let site: Site
  beforeAll(async () => {
    site = await startSite()
  })
  afterAll(() => site?.close())

  browserTest('magic link → key → request → activity and usage → rotate → revoke', () => site, async () => {
    const { page } = await site.open()
    await signInByEmail(site, page, 'first-user@people.test')
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Overview')
    await creditAccount(site.gw.app.operator, await accountOf(page), usdToNano('5')!, 'browser test')

    // Create a key: the secret is shown once.
    await page.getByRole('link', { name: 'API keys' }).click()
    await page.getByRole('button', { name: 'Create key' }).click()
    await page.getByLabel('Name', { exact: true }).fill('browser key')
    await page.getByRole('button', { name: 'Create', exact: true }).click()
    const key = await page.getByLabel('API key').inputValue()
    expect(key).toMatch(/^svc-live-/)

    // Use it through the API.
    const answer = await chat(site, key, hello)
    expect(answer.status).toBe(200)
    const requestId = answer.headers.get('x-request-id')!
    expect(requestId).toBeTruthy()

    // The request in Activity (the record writer flushes within moments).
    await page.goto('/dashboard/activity')
    await eventually(page, async () => (await page.getByText(requestId).count()) > 0)
    const row = page.locator('tr', { hasText: requestId })
    await expect(row.textContent()).resolves.toContain('test/cheap')

    // …and in the usage chart.
    await page.getByRole('link', { name: 'Usage' }).click()
    const chart = page.getByLabel('Spend per day')
    await chart.waitFor()
    await expect(chart.locator('canvas').count()).resolves.toBeGreaterThan(0)
    await expect(page.getByText('test/cheap').first().isVisible()).resolves.toBe(true)

    // Rotate: a new secret, the old one in grace (still accepted).
    await page.getByRole('link', { name: 'API keys' }).click()
    const prefix = key.slice(0, 14)
    await page.locator('tr', { hasText: prefix }).getByRole('button', { name: 'Rotate browser key' }).click()
    await page.getByRole('button', { name: 'Rotate key' }).click()
    const rotated = await page.getByLabel('API key').inputValue()
    expect(rotated).toMatch(/^svc-live-/)
    expect(rotated).not.toBe(key)
    await expect(page.locator('tr', { hasText: prefix }).textContent()).resolves.toContain('In grace')
    expect((await chat(site, key, hello)).status).toBe(200)
    expect((await chat(site, rotated, hello)).status).toBe(200)

    // Revoke the new key: refused at once.
    await page.keyboard.press('Escape')
    const newRow = page.locator('tr', { hasText: rotated.slice(0, 14) })
    await newRow.getByRole('button', { name: 'Revoke browser key' }).click()
    await page.getByRole('button', { name: 'Revoke key' }).click()
    await expect(newRow.getByText('Revoked').waitFor()).resolves.toBeUndefined()
    const refused = await chat(site, rotated, hello)
    expect(refused.status).toBe(401)
  })

  browserTest('every page: no serious axe-core violations, and a hard refresh lands on the same page', () => site, async () => {
    const { page } = await site.open()
    await signInByEmail(site, page, 'axe-user@people.test')
    const failures: string[] = []
    for (const path of PAGES) {
      // A hard load of the address, as a refresh or a bookmark does.
      await page.goto(path)
      await page.getByRole('heading', { level: 1 }).waitFor()
      await page.waitForLoadState('networkidle')
      expect(new URL(page.url()).pathname).toBe(path)
      for (const violation of await seriousViolations(page)) failures.push(`${path}: ${violation.id} (${violation.impact}) ${violation.help} at ${violation.nodes.join(', ')}`)
    }
    for (const path of ['/sign-in', '/setup']) {
      await page.context().clearCookies()
      await page.goto(path)
      await page.getByRole('heading', { level: 1 }).waitFor()
      for (const violation of await seriousViolations(page)) failures.push(`${path}: ${violation.id} (${violation.impact}) ${violation.help} at ${violation.nodes.join(', ')}`)
    }
    expect(failures).toEqual([])
  })
})
