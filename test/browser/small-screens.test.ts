// The dashboard on a phone (390 px wide), a tablet (700 and 820 px, the navigation above the page) and
// a desktop window with the navigation beside it, in a real browser: no page or table scrolls sideways,
// and a table with too little room for its columns shows its rows as cards whose actions and amounts
// are on screen; the wide desktop table stays a table.
import { afterAll, beforeAll, expect } from 'bun:test'
import type { Locator, Page } from 'playwright-core'
import { testModel } from '../helpers/gateway.ts'
import {
  browserTest,
  describeBrowser,
  signedInAs,
  startSite,
  type Site,
} from './helpers/browser.ts'

const PHONE = { width: 390, height: 844 }
/** Tablets held upright (the navigation above the page) and a small desktop (the navigation beside it). */
const NARROWER_THAN_TABLES = [700, 820, 1024]

/** Whether the element is wholly inside the window, left to right. */
async function inView(locator: Locator): Promise<boolean> {
  return locator.evaluate((element) => {
    const box = element.getBoundingClientRect()
    return box.width > 0 && box.left >= 0 && box.right <= window.innerWidth
  })
}

/** What is wider than its box on the page: the page itself, or a table's scrolling frame. */
async function sidewaysScrolling(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const wide: string[] = []
    if (document.documentElement.scrollWidth > window.innerWidth)
      wide.push(`page ${document.documentElement.scrollWidth} > ${window.innerWidth}`)
    for (const frame of document.querySelectorAll<HTMLElement>('.table-wrap'))
      if (frame.scrollWidth > frame.clientWidth)
        wide.push(
          `table ${frame.scrollWidth} > ${frame.clientWidth}: ${frame.textContent?.slice(0, 40)}`,
        )
    return wide
  })
}

/** The date-and-time inputs on the page narrower than they need to show a date and time whole. */
async function cutShortTimes(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll<HTMLInputElement>('input[type="datetime-local"]')].flatMap(
      (input) => {
        // The same input at its own width, off the page: the room its date and time take.
        const natural = input.cloneNode() as HTMLInputElement
        natural.style.cssText = 'position: absolute; visibility: hidden; width: auto'
        document.body.append(natural)
        const needed = natural.getBoundingClientRect().width
        natural.remove()
        const width = input.getBoundingClientRect().width
        return width < needed ? [`${input.labels?.[0]?.textContent}: ${width} < ${needed}`] : []
      },
    ),
  )
}

describeBrowser(
  'the dashboard on a phone',
  () => {
    let site: Site
    beforeAll(async () => {
      site = await startSite({
        database: 'embedded',
        models: [
          testModel('test/cheap', 'fake'),
          testModel('test/a-long-model-name-for-enterprise-reasoning-v2', 'fake'),
        ],
      })
    })
    afterAll(() => site?.close())

    /** An owner's page, 390 px wide, of a new account with two keys (one with limits). */
    const phoneWithKeys = async (): Promise<Page> => {
      const accountId = await site.gw.account('5')
      await site.gw.key(accountId, {
        name: 'Production backend server',
        rpmLimit: 600,
        dailyLimitNano: 5_000_000_000,
      })
      await site.gw.key(accountId, { name: 'Staging' })
      const page = await signedInAs(site, accountId, 'owner')
      await page.setViewportSize(PHONE)
      return page
    }

    browserTest(
      'each key is a card with Edit, Rotate and Revoke on screen, and nothing scrolls sideways',
      () => site,
      async () => {
        const page = await phoneWithKeys()
        await page.goto('/dashboard/keys')
        const revoke = page.getByRole('button', { name: 'Revoke Production backend server' })
        await revoke.waitFor()
        for (const name of ['Edit', 'Rotate', 'Revoke'])
          expect(
            await inView(page.getByRole('button', { name: `${name} Staging` })),
            `${name} Staging`,
          ).toBe(true)
        expect(await inView(revoke)).toBe(true)
        expect(await sidewaysScrolling(page)).toEqual([])
        // Each value is named on screen, as the column header names it on a desktop.
        const row = page.getByRole('row', { name: /Production backend server/ })
        const limits = row.getByRole('cell', { name: /600 requests\/min/ })
        expect(await inView(limits)).toBe(true)
        expect(
          await limits.evaluate((cell) => getComputedStyle(cell, '::before').content),
        ).toContain('Limits')

        // The actions still work from the card.
        await revoke.click()
        await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click()
        await page.getByText('Revoked', { exact: true }).first().waitFor()
      },
    )

    browserTest(
      'the navigation on top of the page ends with the account, without a blank gap above it',
      () => site,
      async () => {
        const accountId = await site.gw.account('5')
        const page = await signedInAs(site, accountId, 'owner')
        // A tall window: the page is shorter than it, as a short page is on any phone.
        await page.setViewportSize({ width: PHONE.width, height: 1400 })
        await page.goto('/dashboard/support')
        await page.getByText('No tickets yet').waitFor()
        const { space, gap } = await page.evaluate(() => {
          const sidebar = document.querySelector('nav.sidebar')!
          const links = sidebar.querySelector('.nav')!.getBoundingClientRect()
          const account = sidebar.querySelector('.account-box')!.getBoundingClientRect()
          return {
            space: account.top - links.bottom,
            gap: Number.parseFloat(getComputedStyle(sidebar).rowGap),
          }
        })
        // The account footer follows the links at the navigation's own spacing.
        expect(space).toBeLessThanOrEqual(gap + 1)
        expect(await sidewaysScrolling(page)).toEqual([])
      },
    )

    browserTest(
      'a long e-mail address wraps in the navigation, on a phone and on a desktop, instead of being cut off',
      () => site,
      async () => {
        const accountId = await site.gw.account('5')
        const email = 'firstname.middlename.lastname@subsidiarycompanyname.com'
        const page = await signedInAs(site, accountId, 'owner', email)
        for (const width of [PHONE.width, 1280]) {
          await page.setViewportSize({ width, height: 900 })
          await page.goto('/dashboard')
          await page.getByRole('heading', { level: 1 }).waitFor()
          const cut = await page.evaluate(() => {
            const sidebar = document.querySelector<HTMLElement>('nav.sidebar')!
            return sidebar.scrollWidth - sidebar.clientWidth
          })
          expect(cut, `at ${width} px`).toBe(0)
          expect(await sidewaysScrolling(page), `at ${width} px`).toEqual([])
        }
      },
    )

    browserTest(
      'activity, the ledger, usage and the team show their amounts and actions on screen',
      () => site,
      async () => {
        const accountId = await site.gw.account('5')
        await site.gw.app.operator
          .sql`UPDATE accounts SET kind = 'identity' WHERE id = ${accountId}`
        const { key } = await site.gw.key(accountId, { name: 'Production backend server' })
        const answer = await site.gw.chat(key, {
          model: 'test/cheap',
          messages: [{ role: 'user', content: 'hello' }],
        })
        expect(answer.status).toBe(200)
        await answer.text()
        const page = await signedInAs(site, accountId, 'owner')
        await page.setViewportSize(PHONE)

        await page.goto('/dashboard/activity')
        const askSupport = page.getByRole('link', { name: /Ask support/ }).first()
        await askSupport.waitFor()
        expect(await inView(askSupport)).toBe(true)
        expect(await inView(page.getByRole('cell', { name: /^\$0\.0000/ }).first())).toBe(true)
        expect(await sidewaysScrolling(page)).toEqual([])
        // A time chosen in the filters shows whole, its AM or PM included.
        await page.getByLabel(/^From/).fill('2026-11-20T13:45')
        expect(await cutShortTimes(page)).toEqual([])

        await page.goto('/dashboard/billing')
        const ledger = page.locator('table').filter({ has: page.getByText('Ledger entries') })
        const charge = ledger.getByRole('cell', { name: /^-\$0\.0000/ }).first()
        await charge.waitFor()
        expect(await inView(charge)).toBe(true)
        expect(await inView(ledger.getByRole('button', { name: /^Copy/ }).first())).toBe(true)
        expect(await sidewaysScrolling(page)).toEqual([])
        expect(await cutShortTimes(page)).toEqual([])

        await page.goto('/dashboard/usage')
        const byModel = page.locator('table').filter({ has: page.getByText(/Totals by model/) })
        const spend = byModel.getByRole('cell', { name: /^\$0\.0000/ }).first()
        await spend.waitFor()
        expect(await inView(spend)).toBe(true)
        expect(await sidewaysScrolling(page)).toEqual([])

        await page.evaluate(() =>
          fetch('/admin/v1/team/invites', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ email: 'someone.invited@example.com', role: 'member' }),
          }),
        )
        await page.goto('/dashboard/team')
        const withdraw = page.getByRole('button', { name: /^Withdraw the invitation/ })
        await withdraw.waitFor()
        expect(await inView(withdraw)).toBe(true)
        expect(await sidewaysScrolling(page)).toEqual([])
      },
    )

    browserTest(
      'on a tablet and on a small desktop, each key is a card with its actions on screen',
      () => site,
      async () => {
        const page = await phoneWithKeys()
        for (const width of NARROWER_THAN_TABLES) {
          await page.setViewportSize({ width, height: 900 })
          await page.goto('/dashboard/keys')
          const revoke = page.getByRole('button', { name: 'Revoke Production backend server' })
          await revoke.waitFor()
          for (const name of ['Edit', 'Rotate', 'Revoke'])
            expect(
              await inView(page.getByRole('button', { name: `${name} Staging` })),
              `${name} Staging at ${width} px`,
            ).toBe(true)
          expect(await inView(revoke), `at ${width} px`).toBe(true)
          expect(await sidewaysScrolling(page), `at ${width} px`).toEqual([])
        }
      },
    )

    browserTest(
      'activity, the ledger and usage fit from a phone to a desktop, long key names included, and a desktop shows the last column of activity',
      () => site,
      async () => {
        const accountId = await site.gw.account('5')
        const { id, key } = await site.gw.key(accountId, {
          name: 'developer-laptop-jane.doe@example-company.com',
        })
        const page = await signedInAs(site, accountId, 'owner')
        await page.goto('/dashboard/guardrails')
        await page.getByRole('heading', { name: 'Guardrails' }).waitFor()
        // A guardrail that redacts, so a row's status names what it redacted.
        const assigned = await page.evaluate(async (keyId) => {
          const write = (method: string, path: string, body: unknown) =>
            fetch(`/admin/v1${path}`, {
              method,
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(body),
            })
          const created = await write('POST', '/guardrails', {
            name: 'Personal data',
            filters: [{ detector: 'email', action: 'redact' }],
          })
          const { id } = (await created.json()) as { id: string }
          return (await write('PATCH', `/keys/${keyId}`, { guardrailId: id })).status
        }, id)
        expect(assigned).toBe(200)
        for (const [model, content] of [
          ['test/cheap', 'hello'],
          ['test/a-long-model-name-for-enterprise-reasoning-v2', 'write to someone@example.com'],
        ]) {
          const answer = await site.gw.chat(key, { model, messages: [{ role: 'user', content }] })
          expect(answer.status).toBe(200)
          await answer.text()
        }
        // A name with no space or hyphen to wrap at.
        const unbroken = await site.gw.key(accountId, {
          name: 'production_backend_server_for_the_customer_facing_chat_assistant',
        })
        const answer = await site.gw.chat(unbroken.key, {
          model: 'test/cheap',
          messages: [{ role: 'user', content: 'hello' }],
        })
        expect(answer.status).toBe(200)
        await answer.text()

        for (const width of NARROWER_THAN_TABLES) {
          await page.setViewportSize({ width, height: 900 })
          await page.goto('/dashboard/activity')
          const askSupport = page.getByRole('link', { name: /Ask support/ }).first()
          await askSupport.waitFor()
          expect(await inView(askSupport), `at ${width} px`).toBe(true)
          expect(await sidewaysScrolling(page), `activity at ${width} px`).toEqual([])

          await page.goto('/dashboard/billing')
          const ledger = page.locator('table').filter({ has: page.getByText('Ledger entries') })
          const charge = ledger.getByRole('cell', { name: /^-\$0\.0000/ }).first()
          await charge.waitFor()
          expect(await inView(charge), `at ${width} px`).toBe(true)
          expect(await sidewaysScrolling(page), `billing at ${width} px`).toEqual([])
          // Each named line of a card has a value: an entry with no reason says so.
          expect(await ledger.locator('td[data-label]:empty').count()).toBe(0)
        }

        // A desktop with the navigation beside the page: the whole table, as a table.
        await page.setViewportSize({ width: 1280, height: 900 })
        await page.goto('/dashboard/activity')
        const status = page.getByRole('columnheader', { name: 'Status' })
        await status.waitFor()
        expect(await status.isVisible()).toBe(true)
        expect(await inView(status)).toBe(true)
        expect(await sidewaysScrolling(page)).toEqual([])

        // The usage totals and charts name the keys too.
        for (const width of [PHONE.width, 1280]) {
          await page.setViewportSize({ width, height: 900 })
          await page.goto('/dashboard/usage')
          await page
            .locator('table')
            .filter({ has: page.getByText(/Totals by key/) })
            .waitFor()
          expect(await sidewaysScrolling(page), `usage at ${width} px`).toEqual([])
        }
      },
    )

    browserTest(
      'on a phone, presets, guardrails and routing fit, with their actions and form fields on screen',
      () => site,
      async () => {
        const accountId = await site.gw.account('5')
        const page = await signedInAs(site, accountId, 'owner')
        await page.setViewportSize(PHONE)
        await page.goto('/dashboard/presets')
        await page.getByRole('heading', { name: 'Presets' }).waitFor()
        const write = (method: string, path: string, body: unknown) =>
          page.evaluate(
            async ([method, path, body]) =>
              (
                await fetch(`/admin/v1${path}`, {
                  method,
                  headers: { 'content-type': 'application/json' },
                  body: JSON.stringify(body),
                })
              ).status,
            [method, path, body] as const,
          )
        expect(
          await write('PUT', '/presets/support-bot-with-a-long-preset-name', {
            model: 'test/cheap',
            fallbacks: ['test/cheap'],
            params: { temperature: 0.2, max_tokens: 4096, stop: ['###', 'END OF ANSWER'] },
          }),
        ).toBe(201)
        expect(
          await write('POST', '/guardrails', {
            name: 'customer_data_protection_for_production_traffic',
            budgetNano: 50_000_000_000,
            filters: [
              { detector: 'email', action: 'redact' },
              { detector: 'secret', action: 'block' },
              {
                detector: 'keywords',
                action: 'redact',
                keywords: ['confidential', 'internal only', 'project_kestrel_internal_codename'],
                name: 'sensitive words',
              },
            ],
          }),
        ).toBe(201)
        expect(
          await write('PUT', '/routing', { models: ['test/cheap'], providers: ['fake'] }),
        ).toBe(200)

        await page.goto('/dashboard/presets')
        const preset = '@preset/support-bot-with-a-long-preset-name'
        const remove = page.getByRole('button', { name: `Delete ${preset}` })
        await remove.waitFor()
        expect(await inView(remove)).toBe(true)
        expect(await inView(page.getByRole('button', { name: `Edit ${preset}` }))).toBe(true)
        expect(await sidewaysScrolling(page)).toEqual([])

        await page.goto('/dashboard/guardrails')
        const edit = page.getByRole('button', {
          name: 'Edit customer_data_protection_for_production_traffic',
        })
        await edit.waitFor()
        expect(await inView(edit)).toBe(true)
        expect(await sidewaysScrolling(page)).toEqual([])
        // Every field of every filter fits in the dialog: none runs past its right edge.
        await edit.click()
        const dialog = page.getByRole('dialog')
        await dialog.getByRole('button', { name: 'Remove filter 3' }).waitFor()
        // Large enough text that a phone does not zoom into a field when it takes the focus.
        const small = await dialog.evaluate((element) =>
          [...element.querySelectorAll('input, select, textarea')]
            .filter((control) => Number.parseFloat(getComputedStyle(control).fontSize) < 16)
            .map((control) => control.id),
        )
        expect(small).toEqual([])
        const outside = await dialog.evaluate((element) => {
          const box = element.getBoundingClientRect()
          return [...element.querySelectorAll('input, select, textarea, button')]
            .filter((control) => control.getBoundingClientRect().right > box.right)
            .map((control) => control.id || control.textContent)
        })
        expect(outside).toEqual([])
        await page.keyboard.press('Escape')

        await page.goto('/dashboard/routing')
        const save = page.getByRole('button', { name: 'Save routing' })
        await save.waitFor()
        expect(await inView(save)).toBe(true)
        expect(await sidewaysScrolling(page)).toEqual([])
      },
    )

    browserTest(
      "on small phones, a guardrail's key to assign stays in its column and is assigned from the keyboard",
      () => site,
      async () => {
        const accountId = await site.gw.account('5')
        await site.gw.key(accountId, { name: 'Production backend server' })
        const page = await signedInAs(site, accountId, 'owner')
        await page.goto('/dashboard/guardrails')
        const made = await page.evaluate(async () => {
          const answer = await fetch('/admin/v1/guardrails', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ name: 'Production guardrail with a rather long name' }),
          })
          return answer.status
        })
        expect(made).toBe(201)
        for (const width of [320, 375]) {
          await page.setViewportSize({ width, height: 740 })
          await page.goto('/dashboard/guardrails')
          const choose = page.getByLabel(
            'Assign Production guardrail with a rather long name to a key',
          )
          await choose.waitFor()
          const overhang = await choose.evaluate((select) => {
            const column = select.closest('dd')!.getBoundingClientRect()
            return select.getBoundingClientRect().right - column.right
          })
          expect(overhang, `at ${width} px`).toBeLessThanOrEqual(0)
          expect(await sidewaysScrolling(page), `at ${width} px`).toEqual([])
        }
        const choose = page.getByLabel(
          'Assign Production guardrail with a rather long name to a key',
        )
        await choose.focus()
        await page.keyboard.press('ArrowDown')
        await page.keyboard.press('Tab')
        await page.keyboard.press('Enter')
        await page.getByRole('button', { name: /^Unassign/ }).waitFor()
        expect(await inView(page.getByRole('button', { name: /^Unassign/ }))).toBe(true)
      },
    )

    browserTest(
      'on a phone, a ticket chosen below a long list comes into view with the focus, and Refresh keeps a half-written reply',
      () => site,
      async () => {
        const accountId = await site.gw.account('5')
        const page = await signedInAs(site, accountId, 'owner')
        await page.setViewportSize(PHONE)
        await page.goto('/dashboard/support')
        await page.getByText('No tickets yet').waitFor()
        const statuses = await page.evaluate(async () => {
          const sent: number[] = []
          for (let index = 1; index <= 8; index++) {
            const answer = await fetch('/admin/v1/support/tickets', {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({
                subject: `Question ${index} about an invoice and a key`,
                body: 'The invoice at https://billing.example.com/invoices/2026/march/account_statement_final_v2.pdf is wrong.',
              }),
            })
            sent.push(answer.status)
          }
          return sent
        })
        expect(statuses.every((status) => status === 201)).toBe(true)
        await page.reload()

        // The list fills the screen; the conversation is drawn below it.
        await page.getByRole('link', { name: /Question 8 / }).click()
        const heading = page.getByRole('heading', { name: 'Question 8 about an invoice and a key' })
        await page.waitForFunction(() => document.activeElement?.tagName === 'H2')
        expect(await heading.evaluate((element) => element === document.activeElement)).toBe(true)
        expect(
          await heading.evaluate((element) => {
            const box = element.getBoundingClientRect()
            return box.top >= 0 && box.bottom <= window.innerHeight
          }),
        ).toBe(true)

        const reply = page.getByLabel('Your reply')
        await reply.fill('The invoice for March is')
        await page.getByRole('button', { name: 'Refresh' }).click()
        await page
          .getByRole('button', { name: 'Refresh' })
          .and(page.locator(':not([aria-busy])'))
          .waitFor()
        expect(await reply.inputValue()).toBe('The invoice for March is')
        // A long address in a message wraps, on a phone and on a tablet.
        expect(await sidewaysScrolling(page)).toEqual([])
        await page.setViewportSize({ width: 820, height: 900 })
        expect(await sidewaysScrolling(page)).toEqual([])
      },
    )

    browserTest(
      'on a phone, a failed read says why inside its box, a long address in the message included',
      () => site,
      async () => {
        const accountId = await site.gw.account('5')
        const page = await signedInAs(site, accountId, 'owner')
        await page.setViewportSize(PHONE)
        await page.route('**/admin/v1/keys', (route) =>
          route.fulfill({
            status: 503,
            contentType: 'application/json',
            body: JSON.stringify({
              error: {
                code: 'service_unavailable',
                message:
                  'Not answered in time: see https://status.example.com/incidents/database_connection_pool_exhausted',
              },
            }),
          }),
        )
        await page.goto('/dashboard/keys')
        const retry = page.getByRole('button', { name: 'Try again' })
        await retry.waitFor()
        expect(await inView(retry)).toBe(true)
        const spill = await page
          .locator('.notice.error')
          .evaluate((notice) => notice.scrollWidth - notice.clientWidth)
        expect(spill).toBe(0)
        expect(await sidewaysScrolling(page)).toEqual([])
      },
    )

    browserTest(
      'on a desktop, the keys are still a table with its column headers',
      () => site,
      async () => {
        const page = await phoneWithKeys()
        await page.setViewportSize({ width: 1280, height: 900 })
        await page.goto('/dashboard/keys')
        const header = page.getByRole('columnheader', { name: 'Last used' })
        await header.waitFor()
        expect(await header.isVisible()).toBe(true)
        expect(await inView(header)).toBe(true)
        // One line per key: the Revoke buttons of the two keys are side by side with their names.
        const revoke = page.getByRole('button', { name: 'Revoke Staging' })
        const name = page.getByRole('rowheader', { name: /Staging/ })
        const [button, label] = [await revoke.boundingBox(), await name.boundingBox()]
        expect(Math.abs(button!.y - label!.y)).toBeLessThan(40)
      },
    )
  },
  'embedded',
)
