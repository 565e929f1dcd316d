// Forms that check what they can before sending, in a real browser: the account limits, a key's limits
// and caps and a preset each show every bad field at once, under that field and linked to it, with focus
// on the first; nothing is sent until they are fixed; a refusal only the server can make (an unknown
// fallback) shows under its field in the form's words. The claim command names the real API address.
import { afterAll, beforeAll, expect } from 'bun:test'
import type { Page } from 'playwright-core'
import { createAccountless } from '../../proxy/accounts/people/accountless.ts'
import {
  browserTest,
  describeBrowser,
  seriousViolations,
  signedInAs,
  startSite,
  type Site,
} from './helpers/browser.ts'

const PUBLIC_API_URL = 'https://api.gateway.test'

/** The control labelled so (a picker's list carries its label too). */
const control = (page: Page, label: string) =>
  page.getByLabel(label, { exact: true }).and(page.locator('input, textarea, select'))

/** The error shown for the field with this label: it must be marked invalid and describe it. */
async function errorOf(page: Page, label: string): Promise<string> {
  const field = control(page, label)
  expect(await field.getAttribute('aria-invalid')).toBe('true')
  const ids = ((await field.getAttribute('aria-describedby')) ?? '').split(' ')
  const errorId = ids.find((id) => id.endsWith('-error'))
  expect(errorId).toBeDefined()
  return page.locator(`[id="${errorId}"]`).innerText()
}

const isValid = async (page: Page, label: string) =>
  (await control(page, label).getAttribute('aria-invalid')) === null

const focusedLabel = (page: Page) =>
  page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.labels?.[0]?.textContent)

/** Counts the admin API writes the page makes (a form refused in the browser makes none). */
function countWrites(page: Page): () => number {
  let writes = 0
  page.on('request', (request) => {
    if (request.url().includes('/admin/v1/') && request.method() !== 'GET') writes++
  })
  return () => writes
}

describeBrowser(
  'forms checked in the dashboard',
  () => {
    let site: Site
    beforeAll(async () => {
      site = await startSite({
        database: 'embedded',
        env: { PUBLIC_API_URL: `${PUBLIC_API_URL}/` },
      })
    })
    afterAll(() => site?.close())

    browserTest(
      'account limits: every bad field named under it at once, nothing sent until fixed, then saved',
      () => site,
      async () => {
        const accountId = await site.gw.account('5')
        const page = await signedInAs(site, accountId, 'owner', `limits-${accountId}@people.test`)
        const writes = countWrites(page)
        await page.goto('/dashboard/routing')
        await page.getByLabel('Requests per minute').fill('many')
        await page.getByLabel('Tokens per minute').fill('-5')
        await page.getByLabel('Requests at once').fill('2000000000')
        await page.getByRole('button', { name: 'Save limits' }).click()
        const rule = 'Enter a whole number from 0 to 1,000,000,000, or leave it empty.'
        expect(await errorOf(page, 'Requests per minute')).toBe(rule)
        expect(await errorOf(page, 'Tokens per minute')).toBe(rule)
        expect(await errorOf(page, 'Requests at once')).toBe(rule)
        expect(await focusedLabel(page)).toBe('Requests per minute')
        expect(writes()).toBe(0)
        expect(await seriousViolations(page)).toEqual([])

        // A fixed field is clear at once; the others keep their problem.
        await page.getByLabel('Requests per minute').fill('1,200')
        expect(await isValid(page, 'Requests per minute')).toBe(true)
        expect(await errorOf(page, 'Tokens per minute')).toBe(rule)
        await page.getByLabel('Tokens per minute').fill('')
        await page.getByLabel('Requests at once').fill('0')
        await page.getByRole('button', { name: 'Save limits' }).click()
        await page.getByText('In force: 1,200.').waitFor()
        expect(writes()).toBe(1)
        const saved = await page.evaluate(async () =>
          (await fetch('/admin/v1/account/limits')).json(),
        )
        expect(saved).toMatchObject({ rpmLimit: 1200, tpmLimit: null, concurrency: 0 })
      },
    )

    browserTest(
      'the server names a limit by its label',
      () => site,
      async () => {
        const accountId = await site.gw.account('5')
        const page = await signedInAs(site, accountId, 'owner', `server-${accountId}@people.test`)
        await page.goto('/dashboard/routing')
        await page.getByLabel('Requests at once').waitFor()
        const refused = await page.evaluate(async () => {
          const response = await fetch('/admin/v1/account/limits', {
            method: 'PATCH',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ tpmLimit: -1 }),
          })
          return (await response.json()).error
        })
        expect(refused).toMatchObject({ param: 'tpmLimit' })
        expect(refused.message).toStartWith('Tokens per minute ')
        expect(refused.message).not.toContain('tpmLimit')
      },
    )

    browserTest(
      "a key's limits and caps: every bad field named at once, then the key is created",
      () => site,
      async () => {
        const accountId = await site.gw.account('5')
        const page = await signedInAs(site, accountId, 'owner', `key-${accountId}@people.test`)
        const writes = countWrites(page)
        await page.goto('/dashboard/keys')
        await page.getByRole('button', { name: 'Create key' }).click()
        await page.getByLabel('Name', { exact: true }).fill('checked')
        await page.getByLabel('Requests per minute').fill('0')
        await page.getByLabel('Requests at once').fill('1.5')
        await page.getByLabel('Daily spend cap (USD)').fill('ten')
        await page.getByLabel('Monthly spend cap (USD)').fill('0')
        await page.getByRole('button', { name: 'Create', exact: true }).click()
        const whole = 'Enter a whole number of at least 1, or leave it empty.'
        expect(await errorOf(page, 'Requests per minute')).toBe(whole)
        expect(await errorOf(page, 'Requests at once')).toBe(whole)
        expect(await errorOf(page, 'Daily spend cap (USD)')).toContain('Enter an amount in USD')
        expect(await errorOf(page, 'Monthly spend cap (USD)')).toBe(
          'Enter a monthly cap above zero, or choose “No monthly cap”.',
        )
        expect(await isValid(page, 'Tokens per minute')).toBe(true)
        expect(await focusedLabel(page)).toBe('Requests per minute')
        expect(writes()).toBe(0)

        await page.getByLabel('Requests per minute').fill('60')
        await page.getByLabel('Requests at once').fill('')
        await page.getByLabel('Daily spend cap (USD)').fill('2.50')
        await page.getByLabel('Monthly spend cap (USD)').fill('')
        await page.getByRole('button', { name: 'Create', exact: true }).click()
        expect(await page.getByLabel('API key', { exact: true }).inputValue()).toMatch(/^svc-live-/)
        expect(writes()).toBe(1)
      },
    )

    browserTest(
      'a preset: every bad field named at once; an unknown fallback refused by the server under Fallbacks; then saved',
      () => site,
      async () => {
        const accountId = await site.gw.account('5')
        const page = await signedInAs(site, accountId, 'owner', `preset-${accountId}@people.test`)
        const writes = countWrites(page)
        await page.goto('/dashboard/presets')
        await page.getByRole('button', { name: 'New preset' }).click()
        const dialog = page.getByRole('dialog')
        await control(page, 'Slug').fill('-writer')
        await control(page, 'Temperature').fill('3')
        await control(page, 'Top P').fill('high')
        await control(page, 'Max tokens').fill('0')
        await control(page, 'Stop sequences').fill('a\nb\nc\nd\ne')
        await dialog.getByRole('button', { name: 'Save preset' }).click()
        expect(await errorOf(page, 'Slug')).toBe(
          'Use 1 to 63 lowercase letters, digits and hyphens, not starting with a hyphen.',
        )
        expect(await errorOf(page, 'Model')).toBe('Choose the model the preset calls.')
        expect(await errorOf(page, 'Temperature')).toBe(
          'Enter a number from 0 to 2, or leave it empty.',
        )
        expect(await errorOf(page, 'Top P')).toBe('Enter a number from 0 to 1, or leave it empty.')
        expect(await errorOf(page, 'Max tokens')).toBe(
          'Enter a whole number of at least 1, or leave it empty.',
        )
        expect(await errorOf(page, 'Stop sequences')).toBe('At most 4 stop sequences, one a line.')
        expect(await isValid(page, 'Fallbacks')).toBe(true)
        expect(await focusedLabel(page)).toBe('Slug')
        expect(writes()).toBe(0)
        expect(await seriousViolations(page)).toEqual([])

        await control(page, 'Slug').fill('writer')
        await control(page, 'Model').fill('test/cheap')
        await control(page, 'Model').press('Enter')
        await control(page, 'Fallbacks').fill('test/nope')
        await control(page, 'Fallbacks').press('Enter')
        await control(page, 'Temperature').fill('0.5')
        await control(page, 'Top P').fill('0.9')
        await control(page, 'Max tokens').fill('100')
        await control(page, 'Stop sequences').fill('END\nSTOP')
        await dialog.getByRole('button', { name: 'Save preset' }).click()
        // Only the server knows the catalog: its refusal names the fallback as the form does.
        await control(page, 'Fallbacks').and(page.locator('[aria-invalid="true"]')).waitFor()
        expect(await errorOf(page, 'Fallbacks')).toBe(
          'Fallback 1: test/nope is not a catalog model ID, alias or service/auto choice.',
        )
        expect(await focusedLabel(page)).toBe('Fallbacks')
        expect(writes()).toBe(1)

        await dialog.getByRole('button', { name: 'Remove test/nope' }).click()
        await dialog.getByRole('button', { name: 'Save preset' }).click()
        await page.getByText('Saved @preset/writer.').waitFor()
        const saved = await page.evaluate(async () => (await fetch('/admin/v1/presets')).json())
        expect(saved.presets).toMatchObject([
          {
            slug: 'writer',
            model: 'test/cheap',
            fallbacks: [],
            params: { temperature: 0.5, top_p: 0.9, max_tokens: 100, stop: ['END', 'STOP'] },
          },
        ])
      },
    )

    browserTest(
      "the claim command names the API server's public address and copies as shown",
      () => site,
      async () => {
        const { linkSecret } = await createAccountless(site.gw.app.operator)
        const { page } = await site.open()
        await page.goto(`/dashboard#link=${linkSecret}`)
        await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
        await page.goto('/dashboard/team')
        await page.getByLabel('Your e-mail address').fill('owner@people.test')
        const command = page.locator('.claim-steps pre code')
        await command.getByText('owner@people.test').waitFor()
        const shown = await command.innerText()
        expect(shown).toStartWith(`curl ${PUBLIC_API_URL}/me/claim \\`)
        expect(shown).not.toContain('YOUR_API_HOST')
        await page.getByRole('button', { name: 'Copy claim command' }).click()
        expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(shown)
      },
    )
  },
  'embedded',
)
