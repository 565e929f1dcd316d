// The dashboard when things are not as expected, in a real browser: a card whose read fails says so in
// place, with Try again, and nothing else on the page breaks; amounts of money show to the last
// nano-USD the server states (a tiny charge never reads as "$0.00" or "-$0.00"); a time range that
// ends before it starts is refused under its To field before anything is asked of the server; the
// usage chart's axis leaves room for its dollar amounts; the new ticket, ticket reply, sign-in, team
// invitation and claim forms refuse an empty or malformed field under it, with focus there, instead of
// the browser's own pop-ups, and a server's refusal of a field shows under that field too. A suspended
// account's owner can still revoke a key, and the controls the suspension disables say so.
import { afterAll, beforeAll, expect } from 'bun:test'
import type { Locator, Page } from 'playwright-core'
import { creditAccount } from '../../proxy/accounts/accounts.ts'
import { updateKey } from '../../proxy/accounts/keys.ts'
import { createGuardrail, updateGuardrail } from '../../proxy/accounts/settings/guardrails.ts'
import { suspendAccount } from '../../proxy/accounts/suspension.ts'
import { holdsEnded } from '../helpers/ledger.ts'
import { browserTest, describeBrowser, ownerPage, startSite, type Site } from './helpers/browser.ts'

/** The text of the field's message (the last of the ids its control is described by). */
async function messageOf(page: Page, control: Locator): Promise<string | null> {
  const describedBy = await control.getAttribute('aria-describedby')
  if (!describedBy) return null
  return page.locator(`[id="${describedBy.split(' ').at(-1)}"]`).textContent()
}

/** Whether the control has the focus. */
const focused = (control: Locator) =>
  control.evaluate((element) => element === document.activeElement)

/** Whether the form that `selector` finds leaves checking to the page (no browser pop-ups). */
const checkedByPage = (page: Page, selector: string) =>
  page.locator(selector).evaluate((form) => (form as HTMLFormElement).noValidate)

/** `message` shows under `field`, which is marked invalid and has the focus. */
async function expectRefusedUnder(page: Page, field: Locator, message: string): Promise<void> {
  await page.getByText(message).first().waitFor({ timeout: 5_000 })
  expect(await messageOf(page, field)).toBe(message)
  expect(await field.getAttribute('aria-invalid')).toBe('true')
  expect(await focused(field)).toBe(true)
}

/** The admin API's writes the page makes from now on (method and path). */
function writesOf(page: Page): string[] {
  const writes: string[] = []
  page.on('request', (request) => {
    if (request.method() !== 'GET' && request.url().includes('/admin/v1/'))
      writes.push(`${request.method()} ${new URL(request.url()).pathname}`)
  })
  return writes
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

    browserTest(
      'amounts show to the nano-USD, without rounding a small one to zero',
      () => site,
      async () => {
        const { page, accountId } = await ownerPage(site)
        // USD 5 + 0.000000005.
        await creditAccount(site.gw.app.operator, accountId, 5, 'tiny credit')
        await page.goto('/dashboard/billing')
        await page.getByText('$5.000000005').first().waitFor()
        const ledger = page.locator('table').filter({ hasText: 'tiny credit' })
        expect(await ledger.getByRole('row', { name: /tiny credit/ }).textContent()).toContain(
          '+$0.000000005',
        )

        // A key's cap of a tenth of a millionth of a dollar, and a large one, as typed.
        await page.goto('/dashboard/keys')
        await page.getByRole('button', { name: 'Create key' }).click()
        const dialog = page.getByRole('dialog')
        await dialog.getByLabel('Name', { exact: true }).fill('tiny caps')
        await dialog.getByLabel('Daily spend cap (USD)').fill('0.0000001')
        await dialog.getByLabel('Monthly spend cap (USD)').fill('1234567.5')
        await dialog.getByRole('button', { name: 'Create', exact: true }).click()
        await page.getByRole('button', { name: 'I have saved it' }).click()
        const row = page.getByRole('row', { name: /tiny caps/ })
        await row
          .getByText('$0.00 of $0.0000001 today · $0.00 of $1,234,567.50 this month')
          .waitFor()
      },
    )

    browserTest(
      "a key's caps and a guardrail's budget show what counts against them, and say when one is reached",
      () => site,
      async () => {
        const { page, accountId } = await ownerPage(site)
        const capped = await site.gw.key(accountId, {
          name: 'capped',
          dailyLimitNano: 1_000_000_000,
          monthlyLimitNano: 20_000_000_000,
        })
        const uncapped = await site.gw.key(accountId, {
          name: 'uncapped',
          dailyLimitNano: null,
          monthlyLimitNano: null,
        })
        // Two requests of USD 0.000019 on the capped key, one on the other.
        for (const key of [capped.key, capped.key, uncapped.key]) {
          const answer = await site.gw.chat(key, {
            model: 'test/cheap',
            messages: [{ role: 'user', content: 'hello' }],
          })
          expect(answer.status).toBe(200)
        }
        await holdsEnded(site.gw, accountId)
        await page.goto('/dashboard/keys')
        const row = (name: string) => page.getByRole('row', { name: new RegExp(`^${name} `) })
        await row('capped')
          .getByText('$0.000038 of $1.00 today · $0.000038 of $20.00 this month')
          .waitFor()
        await row('uncapped')
          .getByText('Spent $0.000019 today, $0.000019 this month (UTC)')
          .waitFor()
        expect(await row('capped').getByText('cap reached').count()).toBe(0)
        await updateKey(site.gw.app.operator, capped.id, { dailyLimitNano: 30_000 })
        await page.reload()
        await row('capped').getByText('Daily cap reached').waitFor()

        // A guardrail's budget, the same way.
        const guardrail = await createGuardrail(site.gw.app.operator, accountId, {
          name: 'budgeted',
          budgetNano: 1_000_000_000,
        })
        await updateKey(site.gw.app.operator, uncapped.id, { guardrailId: guardrail.id })
        for (let i = 0; i < 2; i++) {
          const answer = await site.gw.chat(uncapped.key, {
            model: 'test/cheap',
            messages: [{ role: 'user', content: 'hello' }],
          })
          expect(answer.status).toBe(200)
        }
        await holdsEnded(site.gw, accountId)
        await updateGuardrail(site.gw.app.operator, guardrail.id, { budgetNano: 30_000 })
        await page.goto('/dashboard/guardrails')
        await page
          .getByText('$0.000038 of $0.00003 used this month, across its keys (UTC months)')
          .waitFor()
        await page.getByText('Budget reached').waitFor()
      },
    )

    browserTest(
      'the playground says free chat is unavailable before a message is sent, when no free model is set up',
      () => site,
      async () => {
        const { page } = await ownerPage(site)
        const { playground } = site.gw.app.admin
        const freeModel = playground.freeModel
        playground.freeModel = 'test/cheap'
        try {
          await page.goto('/dashboard/playground')
          await page
            .getByText('Free chat is not available on this service: it has no free model.')
            .waitFor()
          expect(await page.getByText('never charged').count()).toBe(0)
        } finally {
          playground.freeModel = freeModel
        }
      },
    )

    browserTest(
      "the spend chart's y axis has room for its dollar amounts",
      () => site,
      async () => {
        const { page, accountId } = await ownerPage(site)
        const { key } = await site.gw.key(accountId)
        // Three requests of USD 0.000019: the axis reads up to "$0.00006".
        for (let i = 0; i < 3; i++) {
          const answer = await site.gw.chat(key, {
            model: 'test/cheap',
            messages: [{ role: 'user', content: 'hello' }],
          })
          expect(answer.status).toBe(200)
        }
        await page.goto('/dashboard/usage')
        const chart = page.getByRole('img', { name: 'Spend per day' })
        const deadline = Date.now() + 10_000
        while (!(await chart.count())) {
          if (Date.now() > deadline) throw new Error('no spend chart')
          await page.waitForTimeout(250)
          await page.getByRole('button', { name: 'Refresh' }).click()
        }
        // The chart's frame shows before the plot library has drawn into it, and a refresh may draw
        // it again: the plot is found and measured in one step.
        const room = await chart.locator('.u-over').evaluate((over: HTMLElement) => {
          // The plot starts where the y axis ends; the axis draws its values in 12px type.
          const context = document.createElement('canvas').getContext('2d')!
          context.font = '12px system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif'
          return {
            axis: Number.parseFloat(over.style.left),
            text: context.measureText('$0.00006').width,
          }
        })
        // The value, the gap and the tick beside it.
        expect(room.axis).toBeGreaterThanOrEqual(room.text + 15)
      },
    )

    for (const [where, path, form] of [
      ['activity', '/dashboard/activity', 'Filter requests'],
      ['the ledger', '/dashboard/billing', 'Filter the ledger'],
    ] as const)
      browserTest(
        `a time range of ${where} that ends before it starts is refused under To`,
        () => site,
        async () => {
          const { page } = await ownerPage(site)
          await page.goto(path)
          const filters = page.getByRole('form', { name: form })
          await filters.waitFor()
          const asked: string[] = []
          page.on('request', (request) => {
            if (/\/admin\/v1\/(activity|billing\/ledger)\?/.test(request.url()))
              asked.push(request.url())
          })
          await filters.getByLabel(/^From/).fill('2026-03-02T10:00')
          await filters.getByLabel(/^To/).fill('2026-03-01T10:00')
          await filters.getByRole('button', { name: 'Apply filters' }).click()
          const to = filters.getByLabel(/^To/)
          await page.waitForFunction(
            () => document.activeElement?.getAttribute('aria-invalid') === 'true',
          )
          expect(await to.getAttribute('aria-invalid')).toBe('true')
          expect(await to.evaluate((input) => input === document.activeElement)).toBe(true)
          const describedBy = (await to.getAttribute('aria-describedby'))!
          expect(await page.locator(`[id="${describedBy.split(' ').at(-1)}"]`).textContent()).toBe(
            'Choose a time after From, or leave To empty.',
          )
          expect(asked).toEqual([])
          expect(new URL(page.url()).search).toBe('')

          // Fixed, the problem goes away and the range applies.
          await to.fill('2026-03-03T10:00')
          expect(await to.getAttribute('aria-invalid')).toBeNull()
          await filters.getByRole('button', { name: 'Apply filters' }).click()
          await page.waitForURL(/from=.*to=/)
          expect(await page.getByText('must be before').count()).toBe(0)
        },
      )

    browserTest(
      'a key without a name is listed as an unnamed key with its prefix, once',
      () => site,
      async () => {
        const { page, accountId } = await ownerPage(site)
        const { key } = await site.gw.key(accountId)
        const prefix = key.slice(0, 14)
        await page.goto('/dashboard/guardrails')
        await page.getByRole('button', { name: 'New guardrail' }).click()
        await page.getByLabel('Name', { exact: true }).fill('Budget only')
        await page.getByRole('button', { name: 'Save guardrail' }).click()
        const assign = page.getByLabel('Assign Budget only to a key')
        const option = assign.locator('option', { hasText: prefix })
        expect(await option.textContent()).toBe(`Unnamed key (${prefix}…)`)
        await assign.selectOption((await option.getAttribute('value'))!)
        await page.getByRole('button', { name: 'Assign', exact: true }).click()
        const listed = page.locator('li.row-actions').filter({ hasText: prefix })
        await listed.waitFor()
        expect((await listed.locator('span').first().textContent())?.trim()).toBe(
          `Unnamed key ${prefix}…`,
        )
      },
    )

    browserTest(
      'an empty new ticket is refused under its fields, with focus on the first, and nothing is sent',
      () => site,
      async () => {
        const { page } = await ownerPage(site)
        await page.goto('/dashboard/support')
        await page.getByRole('button', { name: 'New ticket' }).click()
        const writes = writesOf(page)
        const subject = page.getByLabel('Subject')
        const message = page.getByLabel('Message', { exact: true })
        expect(await checkedByPage(page, 'form:has(textarea)')).toBe(true)
        await page.getByRole('button', { name: 'Send', exact: true }).click()
        await expectRefusedUnder(page, subject, 'Enter a subject.')
        expect(await messageOf(page, message)).toBe('Write your message.')

        // Spaces are not a subject; the problem of a fixed field goes away at once.
        await subject.fill('   ')
        await message.fill('The key stopped working.')
        expect(await message.getAttribute('aria-invalid')).toBeNull()
        await page.getByRole('button', { name: 'Send', exact: true }).click()
        await page.waitForFunction(
          () => document.activeElement?.getAttribute('aria-invalid') === 'true',
        )
        expect(await focused(subject)).toBe(true)
        expect(writes).toEqual([])

        await subject.fill('Key stopped working')
        await page.getByRole('button', { name: 'Send', exact: true }).click()
        await page.getByRole('heading', { name: 'Key stopped working' }).waitFor()
        expect(writes).toEqual(['POST /admin/v1/support/tickets'])
      },
    )

    browserTest(
      'sign-in refuses a missing or malformed address and an empty dashboard link under the field',
      () => site,
      async () => {
        const { page } = await site.open()
        await page.goto('/sign-in')
        const writes = writesOf(page)
        const email = page.getByLabel('E-mail address')
        const send = page.getByRole('button', { name: 'Send sign-in link' })
        await send.click()
        await expectRefusedUnder(page, email, 'Enter your e-mail address.')

        await email.fill('someone at example.com')
        await send.click()
        await page.getByText('Enter an e-mail address such as name@example.com.').waitFor()
        expect(await messageOf(page, email)).toBe(
          'Enter an e-mail address such as name@example.com.',
        )
        expect(await focused(email)).toBe(true)
        expect(writes).toEqual([])

        await email.fill('someone@example.com')
        expect(await email.getAttribute('aria-invalid')).toBeNull()
        await send.click()
        await page.getByText('Check your inbox').waitFor()
        expect(writes).toEqual(['POST /admin/v1/auth/email'])

        await page.goto('/sign-in')
        await page.getByRole('tab', { name: 'Dashboard link' }).click()
        const link = page.getByRole('textbox', { name: 'Dashboard link' })
        await page.getByRole('button', { name: 'Open dashboard' }).click()
        await page.getByText('Paste your dashboard link.').waitFor({ timeout: 5_000 })
        expect(await messageOf(page, link)).toBe('Paste your dashboard link.')
        expect(await focused(link)).toBe(true)
      },
    )

    browserTest(
      'an empty reply to a ticket is refused under its field, with focus there, and nothing is sent',
      () => site,
      async () => {
        const { page } = await ownerPage(site)
        await page.goto('/dashboard/support')
        await page.getByRole('button', { name: 'New ticket' }).click()
        await page.getByLabel('Subject').fill('Streaming stops early')
        await page.getByLabel('Message', { exact: true }).fill('The stream ends after a minute.')
        await page.getByRole('button', { name: 'Send', exact: true }).click()
        await page.getByRole('heading', { name: 'Streaming stops early' }).waitFor()
        const writes = writesOf(page)
        const reply = page.getByLabel('Your reply')
        const send = page.getByRole('button', { name: 'Reply', exact: true })
        expect(await checkedByPage(page, 'form:has(textarea[name="reply"])')).toBe(true)
        await send.click()
        await expectRefusedUnder(page, reply, 'Write your reply.')

        // Spaces are no reply either.
        await reply.fill('   ')
        await page.getByRole('button', { name: 'Refresh' }).focus()
        await send.click()
        await page.waitForFunction(
          () => document.activeElement?.getAttribute('aria-invalid') === 'true',
        )
        expect(await focused(reply)).toBe(true)
        expect(writes).toEqual([])

        // The server's refusal of the reply shows under it as well.
        const path = /\/admin\/v1\/support\/tickets\/[^/]+\/messages$/
        await page.route(path, (route) =>
          route.fulfill({
            status: 400,
            contentType: 'application/json',
            body: JSON.stringify({
              error: { code: 'invalid_request', message: 'The reply is too long.', param: 'body' },
            }),
          }),
        )
        await reply.fill('It still stops.')
        expect(await reply.getAttribute('aria-invalid')).toBeNull()
        await send.click()
        await page.getByText('The reply is too long.').waitFor()
        expect(await messageOf(page, reply)).toBe('The reply is too long.')
        expect(await focused(reply)).toBe(true)
        await page.unroute(path)

        await send.click()
        await page.locator('.message-body', { hasText: 'It still stops.' }).waitFor()
        // The emptied box shows no problem until the next reply is sent.
        expect(await reply.inputValue()).toBe('')
        expect(await reply.getAttribute('aria-invalid')).toBeNull()
        expect(writes.filter((write) => write.endsWith('/messages')).length).toBe(2)
      },
    )

    browserTest(
      'the team invitation refuses a missing or malformed address under the field, with focus there',
      () => site,
      async () => {
        const { page, accountId } = await ownerPage(site)
        await site.gw.app.operator
          .sql`UPDATE accounts SET kind = 'identity' WHERE id = ${accountId}`
        await page.goto('/dashboard/team')
        const email = page.getByLabel('E-mail address')
        const send = page.getByRole('button', { name: 'Send invitation' })
        await send.waitFor()
        const writes = writesOf(page)
        expect(await checkedByPage(page, 'form:has(button:text("Send invitation"))')).toBe(true)
        await send.click()
        await expectRefusedUnder(page, email, 'Enter the e-mail address to invite.')

        await email.fill('someone at example.com')
        await send.focus()
        await send.click()
        await page.getByText('Enter an e-mail address such as name@example.com.').waitFor()
        expect(await messageOf(page, email)).toBe(
          'Enter an e-mail address such as name@example.com.',
        )
        expect(await focused(email)).toBe(true)
        expect(writes).toEqual([])

        // The server's refusal of the address shows under it as well.
        await page.route(/\/admin\/v1\/team\/invites$/, (route) =>
          route.fulfill({
            status: 409,
            contentType: 'application/json',
            body: JSON.stringify({
              error: {
                code: 'conflict',
                message: 'someone@people.test is already a member of this account',
                param: 'email',
              },
            }),
          }),
        )
        await email.fill('someone@people.test')
        expect(await email.getAttribute('aria-invalid')).toBeNull()
        await send.click()
        await page.getByText('is already a member of this account').waitFor()
        expect(await messageOf(page, email)).toBe(
          'someone@people.test is already a member of this account',
        )
        expect(await focused(email)).toBe(true)
        await page.unroute(/\/admin\/v1\/team\/invites$/)

        await email.fill('invited@people.test')
        await send.click()
        await page.locator('tr', { hasText: 'invited@people.test' }).waitFor()
        // The emptied field shows no problem until the next invitation is sent.
        expect(await email.inputValue()).toBe('')
        expect(await email.getAttribute('aria-invalid')).toBeNull()
        expect(writes).toEqual(['POST /admin/v1/team/invites', 'POST /admin/v1/team/invites'])
      },
    )

    browserTest(
      'the claim command is not copied with a missing or malformed address: the field says why',
      () => site,
      async () => {
        const { page } = await ownerPage(site)
        await page.goto('/dashboard/team')
        const email = page.getByLabel('Your e-mail address')
        const copy = page.getByRole('button', { name: 'Copy claim command' })
        await copy.waitFor()
        expect(await checkedByPage(page, '.claim-steps form')).toBe(true)
        await page.evaluate(() => navigator.clipboard.writeText('untouched'))
        await copy.click()
        await expectRefusedUnder(page, email, 'Enter your e-mail address.')

        await email.fill('owner at people.test')
        await copy.click()
        await page.getByText('Enter an e-mail address such as name@example.com.').waitFor()
        expect(await messageOf(page, email)).toBe(
          'Enter an e-mail address such as name@example.com.',
        )
        expect(await focused(email)).toBe(true)
        // Enter in the field checks it the same way, without the browser's pop-up.
        await email.press('Enter')
        expect(await messageOf(page, email)).toBe(
          'Enter an e-mail address such as name@example.com.',
        )
        expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('untouched')

        await email.fill('owner@people.test')
        expect(await email.getAttribute('aria-invalid')).toBeNull()
        await copy.click()
        const shown = await page.locator('.claim-steps pre code').innerText()
        expect(shown).toContain('owner@people.test')
        expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(shown)
      },
    )
    browserTest(
      "a suspended account's owner can still revoke a key; what the suspension disables says so",
      () => site,
      async () => {
        const { page, accountId } = await ownerPage(site)
        await site.gw.key(accountId, { name: 'leaked' })
        await suspendAccount(site.gw.app.operator, accountId, 'abuse')
        await page.goto('/dashboard/keys')
        await page.getByText('Keys can still be revoked').waitFor()
        for (const name of ['Create key', 'Edit leaked', 'Rotate leaked']) {
          const button = page.getByRole('button', { name, exact: true })
          expect({ name, disabled: await button.isDisabled() }).toEqual({ name, disabled: true })
          expect({ name, title: await button.getAttribute('title') }).toEqual({
            name,
            title: 'Not while the account is suspended',
          })
        }
        await page.getByRole('button', { name: 'Revoke leaked' }).click()
        await page.getByRole('button', { name: 'Revoke key' }).click()
        await page.locator('tr', { hasText: 'leaked' }).getByText('Revoked').waitFor()
        const [row] = await site.gw.app.operator
          .sql`SELECT status FROM api_keys WHERE account_id = ${accountId}`
        expect(row).toEqual({ status: 'revoked' })
      },
    )
  },
  'embedded',
)
