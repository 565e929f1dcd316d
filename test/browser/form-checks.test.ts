// Forms that check what they can before sending, in a real browser: the account limits, a key's limits
// and caps, a preset and a guardrail each show every bad field at once, under that field and linked to
// it, with focus on the first; nothing is sent until they are fixed; a refusal only the server can make
// (an unknown fallback or model, a pattern RE2 cannot read) shows under its field in the form's words.
// A preset's, a key's and a guardrail's pickers offer only the models the account's routing allows, and
// a saved preset whose model routing no longer allows is flagged.
// Keywords are separated by commas as by new lines, and the guardrail's card quotes each.
// The claim command names the real API address.
import { afterAll, beforeAll, expect } from 'bun:test'
import type { Locator, Page } from 'playwright-core'
import { createAccountless } from '../../proxy/accounts/people/accountless.ts'
import { savePreset } from '../../proxy/accounts/settings/presets.ts'
import { setRouting } from '../../proxy/accounts/settings/routing.ts'
import {
  browserTest,
  describeBrowser,
  seriousViolations,
  signedInAs,
  startSite,
  type Site,
} from './helpers/browser.ts'

const PUBLIC_API_URL = 'https://api.gateway.test'

/** The control labelled so, within `scope` (a picker's list carries its label too). */
const control = (scope: Page | Locator, label: string) =>
  scope.getByLabel(label, { exact: true }).and(scope.locator('input, textarea, select'))

/** The error shown for the field with this label: it must be marked invalid and describe it. */
async function errorOf(page: Page, label: string, scope: Page | Locator = page): Promise<string> {
  const field = control(scope, label)
  expect(await field.getAttribute('aria-invalid')).toBe('true')
  const ids = ((await field.getAttribute('aria-describedby')) ?? '').split(' ')
  const errorId = ids.find((id) => id.endsWith('-error'))
  expect(errorId).toBeDefined()
  return page.locator(`[id="${errorId}"]`).innerText()
}

const isValid = async (scope: Page | Locator, label: string) =>
  (await control(scope, label).getAttribute('aria-invalid')) === null

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
        await page.getByLabel('Tokens per minute').fill('3000000000')
        await page.getByLabel('Requests at once').fill('1.5')
        await page.getByLabel('Daily spend cap (USD)').fill('ten')
        await page.getByLabel('Monthly spend cap (USD)').fill('0')
        await page.getByRole('button', { name: 'Create', exact: true }).click()
        const whole = 'Enter a whole number from 1 to 1,000,000,000, or leave it empty.'
        expect(await errorOf(page, 'Requests per minute')).toBe(whole)
        expect(await errorOf(page, 'Tokens per minute')).toBe(whole)
        expect(await errorOf(page, 'Requests at once')).toBe(whole)
        expect(await errorOf(page, 'Daily spend cap (USD)')).toContain('Enter an amount in USD')
        expect(await errorOf(page, 'Monthly spend cap (USD)')).toBe(
          'Enter a monthly cap above zero, or choose “No monthly cap”.',
        )
        expect(await isValid(page, 'Name')).toBe(true)
        expect(await focusedLabel(page)).toBe('Requests per minute')
        expect(writes()).toBe(0)

        await page.getByLabel('Requests per minute').fill('60')
        await page.getByLabel('Tokens per minute').fill('')
        await page.getByLabel('Requests at once').fill('')
        await page.getByLabel('Daily spend cap (USD)').fill('2.50')
        await page.getByLabel('Monthly spend cap (USD)').fill('')
        await page.getByRole('button', { name: 'Create', exact: true }).click()
        expect(await page.getByLabel('API key', { exact: true }).inputValue()).toMatch(/^svc-live-/)
        expect(writes()).toBe(1)
      },
    )

    browserTest(
      'typed key by key, a field keeps the focus and every letter, also while its problem goes away; Enter sends the form',
      () => site,
      async () => {
        const accountId = await site.gw.account('5')
        const page = await signedInAs(site, accountId, 'owner', `typed-${accountId}@people.test`)
        await page.goto('/dashboard/keys')
        await page.getByRole('button', { name: 'Create key' }).click()
        const name = page.getByLabel('Name', { exact: true })
        await name.focus()
        await page.keyboard.type('Nightly build')
        expect(await focusedLabel(page)).toBe('Name')
        expect(await name.inputValue()).toBe('Nightly build')

        await page.keyboard.press('Tab')
        await page.keyboard.type('ten')
        await page.keyboard.press('Enter')
        expect(await errorOf(page, 'Requests per minute')).toContain('Enter a whole number')
        expect(await focusedLabel(page)).toBe('Requests per minute')
        // The problem goes away at the first digit; the field and the focus stay.
        await page.keyboard.press('Control+A')
        await page.keyboard.type('60')
        expect(await isValid(page, 'Requests per minute')).toBe(true)
        expect(await focusedLabel(page)).toBe('Requests per minute')
        expect(await page.getByLabel('Requests per minute').inputValue()).toBe('60')

        await page.keyboard.press('Enter')
        expect(await page.getByLabel('API key', { exact: true }).inputValue()).toMatch(/^svc-live-/)
        const keys = await site.gw.app.operator
          .sql`SELECT name, rpm_limit FROM api_keys WHERE account_id = ${accountId}`
        expect(keys.map((key) => ({ ...key }))).toEqual([{ name: 'Nightly build', rpm_limit: 60 }])

        // A support ticket's message, a text area the form checks, likewise.
        await page.goto('/dashboard/support')
        await page.getByRole('button', { name: 'New ticket' }).click()
        await page.getByLabel('Subject').focus()
        await page.keyboard.type('Slow answers')
        await page.keyboard.press('Tab')
        await page.keyboard.type('Since this morning.')
        expect(await focusedLabel(page)).toBe('Message')
        expect(await page.getByLabel('Subject').inputValue()).toBe('Slow answers')
        expect(await page.getByLabel('Message').inputValue()).toBe('Since this morning.')
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
      "the preset, key and guardrail pickers offer only what the account's routing allows; a preset model it forbids is refused under its field, and flagged on a preset saved before",
      () => site,
      async () => {
        const accountId = await site.gw.account('5')
        // Saved while routing allowed every model; flagged once it no longer allows the model.
        await savePreset(site.gw.app.operator, accountId, 'older', {
          model: 'test/other',
          fallbacks: ['test/cheap'],
        })
        await setRouting(site.gw.app.operator, accountId, { models: ['test/cheap'] })
        const page = await signedInAs(site, accountId, 'owner', `routed-${accountId}@people.test`)
        await page.goto('/dashboard/presets')
        const older = page.getByRole('row', { name: /@preset\/older/ })
        await older.getByText('Not allowed by routing').waitFor()
        expect(await older.getByText('Not allowed by routing').count()).toBe(1)
        expect(await older.locator('[data-label="Model"]').innerText()).toContain(
          'Calls are refused until the Routing page allows it.',
        )
        expect(await older.locator('[data-label="Fallbacks"]').innerText()).toBe('test/cheap')
        await page.goto('/dashboard/presets')
        await page.getByRole('button', { name: 'New preset' }).click()
        const dialog = page.getByRole('dialog')
        await control(page, 'Slug').fill('routed')
        for (const label of ['Model', 'Fallbacks']) {
          await control(page, label).fill('test/')
          const offered = dialog.getByRole('listbox', { name: label }).getByRole('option')
          await offered.filter({ hasText: 'test/cheap' }).waitFor()
          expect(await offered.filter({ hasText: 'test/other' }).count()).toBe(0)
          await control(page, label).fill('')
        }
        // A model typed anyway goes to the server, which names it under its field.
        await control(page, 'Model').fill('test/cheap')
        await control(page, 'Model').press('Enter')
        await control(page, 'Fallbacks').fill('test/other')
        await control(page, 'Fallbacks').press('Enter')
        await dialog.getByRole('button', { name: 'Save preset' }).click()
        await control(page, 'Fallbacks').and(page.locator('[aria-invalid="true"]')).waitFor()
        expect(await errorOf(page, 'Fallbacks')).toBe(
          "Fallback 1: test/other is not allowed by the account's routing restrictions, so every call of the preset would be refused. Allow it on the Routing page, or choose another model.",
        )
        const saved = await page.evaluate(async () => (await fetch('/admin/v1/presets')).json())
        expect(saved.presets.map((preset: { slug: string }) => preset.slug)).toEqual(['older'])
        // A key's and a guardrail's allowed models: the same narrowing.
        for (const [path, create] of [
          ['/dashboard/keys', 'Create key'],
          ['/dashboard/guardrails', 'New guardrail'],
        ]) {
          await page.goto(path!)
          await page.getByRole('button', { name: create }).click()
          await control(page, 'Allowed models').fill('test/')
          const offered = page.getByRole('listbox', { name: 'Allowed models' }).getByRole('option')
          await offered.filter({ hasText: 'test/cheap' }).waitFor()
          expect(await offered.filter({ hasText: 'test/other' }).count()).toBe(0)
        }
      },
    )

    browserTest(
      'a guardrail: every bad field named at once, under its filter too; refusals only the server can make under their fields; then saved',
      () => site,
      async () => {
        const accountId = await site.gw.account('5')
        const page = await signedInAs(site, accountId, 'owner', `guard-${accountId}@people.test`)
        const writes = countWrites(page)
        await page.goto('/dashboard/guardrails')
        await page.getByRole('button', { name: 'New guardrail' }).click()
        const dialog = page.getByRole('dialog')
        const filter = (n: number) => dialog.getByRole('group', { name: `Filter ${n}` })
        await control(dialog, 'Monthly budget (USD)').fill('0')
        for (let i = 0; i < 3; i++) await dialog.getByRole('button', { name: 'Add filter' }).click()
        await control(filter(1), 'Detector').selectOption('regex')
        await control(filter(1), 'Label (optional)').fill('card] [x')
        await control(filter(2), 'Detector').selectOption('keywords')
        await control(filter(2), 'Keywords').fill('  \n ')
        await control(filter(3), 'Detector').selectOption('phone')
        await dialog.getByRole('button', { name: 'Save guardrail' }).click()

        expect(await errorOf(page, 'Name', dialog)).toBe('Give the guardrail a name.')
        expect(await errorOf(page, 'Monthly budget (USD)', dialog)).toBe(
          'Enter an amount above zero, or leave it empty for none.',
        )
        expect(await errorOf(page, 'Pattern', filter(1))).toBe(
          'Enter a pattern, or choose another detector.',
        )
        expect(await errorOf(page, 'Label (optional)', filter(1))).toBe(
          'Use at most 64 characters, without brackets or control characters.',
        )
        expect(await errorOf(page, 'Keywords', filter(2))).toBe(
          'Enter at least one keyword, one a line, or choose another detector.',
        )
        for (const label of ['Detector', 'Action', 'Label (optional)'])
          expect(await isValid(filter(3), label)).toBe(true)
        expect(await isValid(dialog, 'Allowed models')).toBe(true)
        expect(await focusedLabel(page)).toBe('Name')
        expect(writes()).toBe(0)
        expect(await seriousViolations(page)).toEqual([])

        // Fixed fields clear at once; what only the server can check goes to it, one refusal at a time.
        await control(dialog, 'Name').fill('No cards')
        expect(await isValid(dialog, 'Name')).toBe(true)
        await control(dialog, 'Monthly budget (USD)').fill('$12.50')
        await control(filter(1), 'Pattern').fill('card (abc')
        await control(filter(1), 'Label (optional)').fill('card')
        await control(filter(2), 'Keywords').fill('zeus\nproject x')
        await control(dialog, 'Allowed models').fill('test/nope')
        await control(dialog, 'Allowed models').press('Enter')
        await dialog.getByRole('button', { name: 'Save guardrail' }).click()
        await control(dialog, 'Allowed models').and(page.locator('[aria-invalid="true"]')).waitFor()
        expect(await errorOf(page, 'Allowed models', dialog)).toBe(
          'Allowed models: unknown model IDs: test/nope. GET /api/v1/models lists them.',
        )
        expect(await focusedLabel(page)).toBe('Allowed models')
        expect(writes()).toBe(1)

        await dialog.getByRole('button', { name: 'Remove test/nope' }).click()
        await dialog.getByRole('button', { name: 'Save guardrail' }).click()
        // RE2's reading of the pattern, under the filter's Pattern field, in the form's words.
        await control(filter(1), 'Pattern').and(page.locator('[aria-invalid="true"]')).waitFor()
        expect(await errorOf(page, 'Pattern', filter(1))).toStartWith(
          'Filter 1: Pattern is not a valid pattern: missing closing )',
        )
        expect(await isValid(filter(1), 'Detector')).toBe(true)
        expect(await isValid(dialog, 'Allowed models')).toBe(true)
        expect(await focusedLabel(page)).toBe('Pattern')
        expect(writes()).toBe(2)

        await control(filter(1), 'Pattern').fill('card [0-9]{4}')
        await dialog.getByRole('button', { name: 'Save guardrail' }).click()
        await dialog.waitFor({ state: 'detached' })
        expect(writes()).toBe(3)
        const saved = await page.evaluate(async () => (await fetch('/admin/v1/guardrails')).json())
        expect(saved.guardrails).toMatchObject([
          {
            name: 'No cards',
            models: null,
            budgetNano: 12_500_000_000,
            filters: [
              { detector: 'regex', action: 'redact', pattern: 'card [0-9]{4}', name: 'card' },
              { detector: 'keywords', action: 'redact', keywords: ['zeus', 'project x'] },
              { detector: 'phone', action: 'redact' },
            ],
          },
        ])
      },
    )

    browserTest(
      "a guardrail's keywords: commas separate them as new lines do, and its card quotes each",
      () => site,
      async () => {
        const accountId = await site.gw.account('5')
        const page = await signedInAs(site, accountId, 'owner', `words-${accountId}@people.test`)
        await page.goto('/dashboard/guardrails')
        await page.getByRole('button', { name: 'New guardrail' }).click()
        const dialog = page.getByRole('dialog')
        const filter = dialog.getByRole('group', { name: 'Filter 1' })
        await control(dialog, 'Name').fill('Fruit')
        await dialog.getByRole('button', { name: 'Add filter' }).click()
        await control(filter, 'Detector').selectOption('keywords')
        await control(filter, 'Keywords').fill('bananas, secret project\nzeus')
        await dialog.getByRole('button', { name: 'Save guardrail' }).click()
        await dialog.waitFor({ state: 'detached' })
        const saved = await page.evaluate(async () => (await fetch('/admin/v1/guardrails')).json())
        expect(saved.guardrails[0].filters).toMatchObject([
          { detector: 'keywords', keywords: ['bananas', 'secret project', 'zeus'] },
        ])
        await page.getByText('Keyword list (“bananas”, “secret project”, “zeus”)').waitFor()
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
