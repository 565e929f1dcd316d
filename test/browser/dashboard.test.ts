// The dashboard in a real browser, as a user goes through it: sign in by magic link (read from the test
// SMTP server), create a key, use it through the API, find the request in Activity and in the usage
// chart, rotate and revoke the key; every page passes axe-core and survives a hard refresh.
import { afterAll, beforeAll, expect } from 'bun:test'
import type { Page } from 'playwright-core'
import { creditAccount } from '../../proxy/accounts/accounts.ts'
import { usdToNano } from '../../shared/money.ts'
import { testModel } from '../helpers/gateway.ts'
import { newWallet } from '../helpers/siwe.ts'
import { linkIn } from '../helpers/smtp.ts'
import { sessionFor } from '../helpers/admin.ts'
import {
  accountOf,
  browserTest,
  chat,
  describeBrowser,
  seriousViolations,
  signedInAs,
  signInByEmail,
  startSite,
  type Site,
} from './helpers/browser.ts'

const hello = { model: 'test/cheap', messages: [{ role: 'user', content: 'hello' }] }
const models = [
  testModel('test/cheap', 'fake'),
  testModel('test/other', 'fake'),
  // A free model streaming its words a little apart, for the playground's free trial.
  testModel('test/free', 'free-stream?tokens=6&chunkDelay=20', {
    pricing: { inputPerMTok: 0, outputPerMTok: 0 },
    free: true,
  }),
]

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

/** Creates a key on the Keys page; answers its secret (shown once). */
async function createKey(page: Page, name: string): Promise<string> {
  await page.goto('/dashboard/keys')
  await page.getByRole('button', { name: 'Create key' }).click()
  await page.getByLabel('Name', { exact: true }).fill(name)
  await page.getByRole('button', { name: 'Create', exact: true }).click()
  const key = await page.getByLabel('API key', { exact: true }).inputValue()
  expect(key).toMatch(/^svc-live-/)
  return key
}

/** Retries `check` (reloading with the page's Refresh button when it has one) until it passes. */
async function eventually(
  page: Page,
  check: () => Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    const refresh = page.getByRole('button', { name: 'Refresh' })
    if (await refresh.count()) await refresh.first().click()
    else await page.reload()
    await page.waitForTimeout(250)
  }
}

// On PostgreSQL, and on the embedded database a fresh install starts with.
for (const database of ['postgres', 'embedded'] as const)
  describeBrowser(
    `dashboard in the browser (${database})`,
    () => {
      let site: Site
      beforeAll(async () => {
        site = await startSite({
          database,
          models,
          catalog: { auto: [{ id: 'service/auto:free', free: true, candidates: ['test/free'] }] },
          env: { FREE_CHAT_MESSAGES: '2' },
        })
      })
      afterAll(() => site?.close())
      /** A team account (one a person signed up for) with its owner. */
      const ownedTeamAccount = async () => {
        const accountId = await site.gw.account('5')
        await site.gw.app.operator
          .sql`UPDATE accounts SET kind = 'identity' WHERE id = ${accountId}`
        await sessionFor(site.gw, accountId, 'owner')
        return accountId
      }

      browserTest(
        'magic link → key → request → activity and usage → rotate → revoke',
        () => site,
        async () => {
          const { page } = await site.open()
          await signInByEmail(site, page, 'first-user@people.test')
          await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
          await creditAccount(
            site.gw.app.operator,
            await accountOf(page),
            usdToNano('5')!,
            'browser test',
          )

          // Create a key: the secret is shown once (axe also runs with the dialog open).
          const key = await createKey(page, 'browser key')
          expect(await seriousViolations(page)).toEqual([])

          // Use it through the API.
          const answer = await chat(site, key, hello)
          expect(answer.status).toBe(200)
          const requestId = answer.headers.get('x-request-id')!
          expect(requestId).toBeTruthy()

          // The request in Activity (the record writer flushes within moments).
          await page.goto('/dashboard/activity')
          await eventually(page, async () => (await page.getByText(requestId).count()) > 0)
          const row = page.locator('tr', { hasText: requestId })
          expect(await row.textContent()).toContain('test/cheap')
          expect(await seriousViolations(page)).toEqual([])

          // …its charge in the billing ledger…
          await page.goto('/dashboard/billing')
          await eventually(
            page,
            async () => (await page.locator('tr', { hasText: requestId }).count()) > 0,
          )
          expect(await page.locator('tr', { hasText: requestId }).textContent()).toContain('Charge')

          // …and in the usage chart.
          await page.goto('/dashboard/usage')
          const chart = page.getByLabel('Spend per day')
          await chart.waitFor()
          await chart.locator('canvas').first().waitFor()
          await page.getByText('test/cheap').first().waitFor()
          expect(await seriousViolations(page)).toEqual([])

          // Rotate: a new secret, the old one in grace (still accepted).
          await page.getByRole('link', { name: 'API keys' }).click()
          const prefix = key.slice(0, 14)
          await page
            .locator('tr', { hasText: prefix })
            .getByRole('button', { name: 'Rotate browser key' })
            .click()
          await page.getByRole('button', { name: 'Rotate key' }).click()
          const rotated = await page.getByLabel('API key', { exact: true }).inputValue()
          expect(rotated).toMatch(/^svc-live-/)
          expect(rotated).not.toBe(key)
          await page.locator('tr', { hasText: prefix }).filter({ hasText: 'In grace' }).waitFor()
          expect((await chat(site, key, hello)).status).toBe(200)
          expect((await chat(site, rotated, hello)).status).toBe(200)

          // Revoke the new key: refused at once.
          await page.keyboard.press('Escape')
          // The old key's row names its replacement too: the new key's row is the active one.
          const newRow = page
            .locator('tr', { hasText: rotated.slice(0, 14) })
            .filter({ hasText: 'Active' })
          await newRow.getByRole('button', { name: 'Revoke browser key' }).click()
          await page.getByRole('button', { name: 'Revoke key' }).click()
          await page
            .locator('tr', { hasText: rotated.slice(0, 14) })
            .filter({ hasText: 'Revoked' })
            .waitFor()
          const refused = await chat(site, rotated, hello)
          expect(refused.status).toBe(401)
        },
      )

      browserTest(
        'a guardrail made in the dashboard blocks a request, and Activity shows it',
        () => site,
        async () => {
          const { page } = await site.open()
          await signInByEmail(site, page, 'guarded-user@people.test')
          await creditAccount(
            site.gw.app.operator,
            await accountOf(page),
            usdToNano('5')!,
            'browser test',
          )
          const key = await createKey(page, 'guarded')

          await page.goto('/dashboard/guardrails')
          await page.getByRole('button', { name: 'New guardrail' }).click()
          await page.getByLabel('Name', { exact: true }).fill('No e-mail')
          await page.getByRole('button', { name: 'Add filter' }).click()
          await page.getByLabel('Detector').selectOption('email')
          await page.getByLabel('Action').selectOption('block')
          await page.getByRole('button', { name: 'Save guardrail' }).click()
          const assign = page.getByLabel('Assign No e-mail to a key')
          await assign.selectOption(
            (await assign.locator('option', { hasText: key.slice(0, 14) }).getAttribute('value'))!,
          )
          await page.getByRole('button', { name: 'Assign', exact: true }).click()
          await page.getByRole('button', { name: /Unassign guarded/ }).waitFor()

          const blocked = await chat(site, key, {
            model: 'test/cheap',
            messages: [{ role: 'user', content: 'Write to alice@example.com please' }],
          })
          expect(blocked.status).toBe(403)
          expect(((await blocked.json()) as { error: { code: string } }).error.code).toBe(
            'guardrail_blocked',
          )
          expect((await chat(site, key, hello)).status).toBe(200)

          const requestId = blocked.headers.get('x-request-id')!
          await page.goto('/dashboard/activity')
          await eventually(page, async () => (await page.getByText(requestId).count()) > 0)
          expect(await page.locator('tr', { hasText: requestId }).textContent()).toContain(
            'guardrail_blocked',
          )
        },
      )

      browserTest(
        'accountless setup: proof of work, both secrets once, confirmation before top-up, the link signs in elsewhere',
        () => site,
        async () => {
          const { page } = await site.open()
          await page.goto('/setup')
          await page
            .getByText(/no recovery/i)
            .first()
            .waitFor()
          // The altcha widget: the user ticks it, the browser does the proof of work against the server's challenge.
          await page.locator('.bot-check').getByText("I'm not a robot").click()
          const key = await page.getByLabel('API key', { exact: true }).inputValue()
          const link = await page.getByLabel('Dashboard link', { exact: true }).inputValue()
          expect(key).toMatch(/^svc-live-/)
          expect(link).toContain('/dashboard#link=')
          // No top-up step until both secrets are confirmed saved.
          expect(await page.getByRole('button', { name: 'Open dashboard' }).count()).toBe(0)
          const confirm = page.getByRole('button', { name: 'I saved both' })
          expect(await confirm.isDisabled()).toBe(true)
          await page.getByLabel('I saved the API key').check()
          await page.getByLabel('I saved the dashboard link').check()
          await confirm.click()
          await page.getByRole('button', { name: 'Open dashboard' }).click()
          await page.waitForURL(/\/dashboard$/)
          await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
          const accountId = await accountOf(page)

          // The key works once there is credit.
          expect((await chat(site, key, hello)).status).toBe(402)
          await creditAccount(site.gw.app.operator, accountId, usdToNano('1')!, 'browser test')
          expect((await chat(site, key, hello)).status).toBe(200)

          // The dashboard link opens the same account in another browser profile, and leaves the address bar.
          const other = await site.open()
          await other.page.goto(link)
          await other.page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
          expect(other.page.url()).not.toContain('#link=')
          expect(await accountOf(other.page)).toBe(accountId)
        },
      )

      browserTest(
        'wallet sign-in through an injected wallet: the page builds the SIWE message, the wallet signs it',
        () => site,
        async () => {
          const { page } = await site.open()
          const wallet = newWallet()
          // An injected EIP-1193 wallet whose signatures come from a local private key.
          await page.exposeFunction('signWithTestWallet', (message: string) =>
            wallet.signMessage({ message }),
          )
          await page.addInitScript((address: string) => {
            const sign = (
              window as unknown as { signWithTestWallet(message: string): Promise<string> }
            ).signWithTestWallet
            ;(window as unknown as { ethereum: unknown }).ethereum = {
              async request({ method, params }: { method: string; params?: unknown[] }) {
                if (method === 'eth_requestAccounts') return [address]
                if (method === 'personal_sign') return sign(String(params![0]))
                throw new Error(`unsupported wallet method ${method}`)
              },
            }
          }, wallet.address)
          await page.goto('/sign-in?next=/dashboard/keys')
          await page.getByRole('tab', { name: 'Wallet' }).click()
          await page.getByRole('button', { name: 'Sign in with wallet' }).click()
          await page.waitForURL(/\/dashboard\/keys$/)
          await page.getByRole('heading', { level: 1, name: 'Keys' }).waitFor()
          const me = (await page.evaluate(async () => (await fetch('/admin/v1/me')).json())) as {
            user: { wallet: string }
          }
          expect(me.user.wallet.toLowerCase()).toBe(wallet.address.toLowerCase())
        },
      )

      browserTest(
        'e-mail sign-in from a signed-out page lands on that page through the mailed link',
        () => site,
        async () => {
          const { page } = await site.open()
          await page.goto('/dashboard/billing')
          await page.waitForURL(/\/sign-in\?next=%2Fdashboard%2Fbilling$/)
          const email = 'billing-reader@people.test'
          await page.getByLabel('E-mail address').fill(email)
          await page.getByRole('button', { name: 'Send sign-in link' }).click()
          await page.getByText('Check your inbox').waitFor()
          const link = linkIn(await site.smtp.next(email))
          expect(link.searchParams.get('next')).toBe('/dashboard/billing')
          await page.goto(link.href)
          await page.getByRole('button', { name: 'Sign in' }).click()
          await page.waitForURL(/\/dashboard\/billing$/)
          await page.getByRole('heading', { level: 1, name: 'Billing' }).waitFor()
        },
      )

      browserTest(
        'playground: free trial messages stream first, then paid chat only when chosen, with its cost',
        () => site,
        async () => {
          const { page } = await site.open()
          await signInByEmail(site, page, 'chatty-user@people.test')
          const accountId = await accountOf(page)
          await creditAccount(site.gw.app.operator, accountId, usdToNano('1')!, 'browser test')
          // The account's routing allows two of the models: paid chat offers only those.
          await site.gw.app.gateway
            .sql`UPDATE accounts SET allowed_models = ${['test/cheap', 'test/free']} WHERE id = ${accountId}`
          await site.gw.app.gateway.keys.invalidate({ accountId })
          const paidBefore = site.gw.upstream.requests.filter(
            (request) => request.body.model === 'fake',
          ).length
          await page.goto('/dashboard/playground')
          await page.getByText('2 of 2 free messages left').waitFor()
          for (const [index, text] of ['Hello there', 'And again'].entries()) {
            await page.getByLabel('Message', { exact: true }).fill(text)
            await page.getByRole('button', { name: 'Send', exact: true }).click()
            const answer = page.getByRole('article', { name: `Answer ${index + 1}` })
            await answer.and(page.locator(':not([aria-busy])')).waitFor()
            expect(await answer.textContent()).toContain('$')
          }
          // Used up: said in words, Send disabled, and nothing paid sent on the user's behalf.
          await page.getByText('Your free messages are used up').waitFor()
          expect(await page.getByRole('button', { name: 'Send', exact: true }).isDisabled()).toBe(
            true,
          )
          expect(
            site.gw.upstream.requests.filter((request) => request.body.model === 'fake').length,
          ).toBe(paidBefore)

          // Paid chat, chosen explicitly: charged, with its cost on the answer.
          await page.getByLabel('Paid chat (charged to your balance)').check()
          const offered = page.getByLabel('Model', { exact: true }).locator('option')
          await offered.first().waitFor({ state: 'attached' })
          const labels = await offered.allTextContents()
          expect(labels.some((label) => label.includes('test/cheap'))).toBe(true)
          expect(labels.some((label) => label.includes('test/other'))).toBe(false)
          await page.getByLabel('Model', { exact: true }).selectOption('test/cheap')
          await page.getByLabel('Message', { exact: true }).fill('Now a paid one')
          await page.getByRole('button', { name: 'Send', exact: true }).click()
          const paid = page.getByRole('article', { name: 'Answer 3' })
          await paid.and(page.locator(':not([aria-busy])')).waitFor()
          expect(await paid.textContent()).toMatch(/\$0\.0000\d+/)
          expect(
            site.gw.upstream.requests.filter((request) => request.body.model === 'fake').length,
          ).toBe(paidBefore + 1)
          expect(await seriousViolations(page)).toEqual([])
        },
      )

      browserTest(
        'the owner invites someone, sees the invitation pending, and withdraws it',
        () => site,
        async () => {
          const { page } = await site.open()
          await signInByEmail(site, page, 'team-owner@people.test')
          await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
          await page.goto('/dashboard/team')
          await page.getByLabel('E-mail address').fill('invited@people.test')
          await page.getByRole('button', { name: 'Send invitation' }).click()
          const pending = page.locator('tr', { hasText: 'invited@people.test' })
          await pending.waitFor()
          await page
            .getByRole('button', { name: 'Withdraw the invitation to invited@people.test' })
            .click()
          await page.getByRole('button', { name: 'Withdraw invitation' }).click()
          await page.getByText('No invitations are waiting to be accepted.').waitFor()
          expect(await pending.count()).toBe(0)
          expect(await seriousViolations(page)).toEqual([])
        },
      )

      browserTest(
        'a team member sees the account read-only, with the owner-only rules stated',
        () => site,
        async () => {
          const accountId = await ownedTeamAccount()
          const member = await sessionFor(site.gw, accountId, 'member')
          const { context, page } = await site.open()
          const [name, value] = member.cookie.split('=') as [string, string]
          await context.addCookies([{ name, value, url: site.siteUrl }])

          await page.goto('/dashboard/keys')
          await page.getByText("Only the account's owner and admins can change them").waitFor()
          expect(await page.getByRole('button', { name: 'Create key' }).isDisabled()).toBe(true)
          await page.goto('/dashboard/billing')
          await page.getByText('only the account owner can top up', { exact: false }).waitFor()
          expect(await page.getByRole('button', { name: 'Top up' }).isDisabled()).toBe(true)
          await page.goto('/dashboard/team')
          await page.getByText('Owner only').first().waitFor()
          expect(await seriousViolations(page)).toEqual([])
        },
      )

      browserTest(
        'a member leaves the team by keyboard and goes on to the account they still have',
        () => site,
        async () => {
          const { sql } = site.gw.app.operator
          const left = await site.gw.account('5')
          const kept = await site.gw.account('5')
          await sql`UPDATE accounts SET kind = 'identity' WHERE id IN (${left}, ${kept})`
          await sessionFor(site.gw, left, 'owner')
          await sessionFor(site.gw, kept, 'owner')
          const member = await sessionFor(site.gw, left, 'member')
          const userId = member.userId!
          await sql`INSERT INTO memberships (account_id, user_id, role) VALUES (${kept}, ${userId}, 'admin')`
          const { context, page } = await site.open()
          const [name, value] = member.cookie.split('=') as [string, string]
          await context.addCookies([{ name, value, url: site.siteUrl }])

          await page.goto('/dashboard/team')
          const leave = page.getByRole('button', { name: 'Leave team' })
          await leave.focus()
          await page.keyboard.press('Enter')
          const dialog = page.getByRole('dialog', { name: `Leave account ${left}?` })
          await dialog.waitFor()
          expect(await dialog.textContent()).toContain(
            'API keys stay with the account, including any you created',
          )
          expect(await dialog.textContent()).toContain(`You then go on in account ${kept} (admin).`)
          expect(await seriousViolations(page)).toEqual([])
          // The dialog opens on Cancel; the next stop is the confirmation.
          await page.keyboard.press('Tab')
          expect(await page.evaluate(() => document.activeElement?.textContent?.trim())).toBe(
            'Leave team',
          )
          await page.keyboard.press('Enter')

          await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
          expect(await accountOf(page)).toBe(kept)
          // The frame shows the account it acts for now; with one account left there is nothing to switch to.
          await page.getByTitle('Account ID').filter({ hasText: kept }).waitFor({ timeout: 5_000 })
          expect(await page.getByLabel('Account', { exact: true }).count()).toBe(0)
          expect(
            await sql`SELECT 1 FROM memberships WHERE account_id = ${left} AND user_id = ${userId}`,
          ).toHaveLength(0)
        },
      )

      browserTest(
        'a member of no other account who leaves lands on sign-in, which says so',
        () => site,
        async () => {
          const accountId = await ownedTeamAccount()
          const page = await signedInAs(site, accountId, 'member')
          await page.goto('/dashboard/team')
          await page.getByRole('button', { name: 'Leave team' }).click()
          const dialog = page.getByRole('dialog', { name: `Leave account ${accountId}?` })
          expect(await dialog.textContent()).toContain('You belong to no other account')
          await dialog.getByRole('button', { name: 'Leave team' }).click()
          await page.waitForURL('**/sign-in?left=**')
          await page.getByText(`You left account ${accountId}`).waitFor()
          expect(await seriousViolations(page)).toEqual([])
          const me = await page.evaluate(async () => (await fetch('/admin/v1/me')).status)
          expect(me).toBe(401)
        },
      )

      browserTest(
        'the owner is told why they cannot leave, with no button to try',
        () => site,
        async () => {
          const accountId = await site.gw.account('5')
          await site.gw.app.operator
            .sql`UPDATE accounts SET kind = 'identity' WHERE id = ${accountId}`
          const page = await signedInAs(site, accountId, 'owner')
          await page.goto('/dashboard/team')
          await page.getByText('You own this account, so you cannot leave it').waitFor()
          expect(await page.getByRole('button', { name: 'Leave team' }).count()).toBe(0)
          await page.getByRole('link', { name: 'write to support' }).click()
          await page.getByRole('heading', { level: 1, name: 'Support' }).waitFor()
        },
      )

      browserTest(
        'Skip to content moves the keyboard past the navigation to the page',
        () => site,
        async () => {
          const { page } = await site.open()
          await signInByEmail(site, page, 'keyboard-user@people.test')
          await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
          await page.keyboard.press('Tab')
          expect(await page.evaluate(() => document.activeElement?.textContent?.trim())).toBe(
            'Skip to content',
          )
          await page.keyboard.press('Enter')
          expect(await page.evaluate(() => document.activeElement?.id)).toBe('main')
          // The next Tab lands inside the page, not in the navigation.
          await page.keyboard.press('Tab')
          expect(
            await page.evaluate(() => document.activeElement?.closest('main')?.id ?? 'outside'),
          ).toBe('main')
        },
      )

      browserTest(
        'a dashboard link that opens nothing lands on sign-in, which says why',
        () => site,
        async () => {
          const { page } = await site.open()
          await page.goto('/dashboard/keys#link=not-a-link-of-this-site')
          await page.waitForURL('**/sign-in**')
          await page.getByText('That dashboard link no longer opens an account').waitFor()
          expect(new URL(page.url()).searchParams.get('next')).toBe('/dashboard/keys')
        },
      )

      browserTest(
        'after signing out, Back shows no page of the account that was signed in',
        () => site,
        async () => {
          const { page } = await site.open()
          await signInByEmail(site, page, 'leaving-user@people.test')
          await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
          const accountId = await accountOf(page)
          await page.getByRole('navigation').getByRole('link', { name: 'Billing' }).click()
          await page.getByRole('heading', { level: 1, name: 'Billing' }).waitFor()
          await page.getByRole('button', { name: 'Sign out' }).click()
          await page.waitForURL('**/sign-in')
          await page.goBack()
          await page.waitForURL('**/sign-in**')
          await page.waitForLoadState('networkidle')
          expect(await page.locator('body').innerText()).not.toContain(accountId)
        },
      )

      browserTest(
        'at a phone’s width no page is wider than the screen: wide tables scroll in their own box',
        () => site,
        async () => {
          const { page } = await site.open()
          await signInByEmail(site, page, 'phone-user@people.test')
          await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
          await creditAccount(site.gw.app.operator, await accountOf(page), usdToNano('1')!, 'test')
          const key = await createKey(page, 'a key with a rather long name for a phone')
          expect((await chat(site, key, hello)).status).toBe(200)
          await page.setViewportSize({ width: 390, height: 844 })
          const wider: string[] = []
          for (const path of PAGES) {
            await page.goto(path)
            await page.getByRole('heading', { level: 1 }).waitFor()
            await page.waitForLoadState('networkidle')
            const [width, screen] = await page.evaluate(() => [
              document.documentElement.scrollWidth,
              window.innerWidth,
            ])
            if (width! > screen!) wider.push(`${path}: ${width} px`)
          }
          expect(wider).toEqual([])
        },
      )

      browserTest(
        'every page: no serious axe-core violations, and a hard refresh lands on the same page',
        () => site,
        async () => {
          const { page } = await site.open()
          await signInByEmail(site, page, 'axe-user@people.test')
          const failures: string[] = []
          for (const path of PAGES) {
            // A hard load of the address, as a refresh or a bookmark does.
            await page.goto(path)
            await page.getByRole('heading', { level: 1 }).waitFor()
            await page.waitForLoadState('networkidle')
            expect(new URL(page.url()).pathname).toBe(path)
            // The browser's title names the page, as its heading does.
            const heading = await page.getByRole('heading', { level: 1 }).textContent()
            expect(await page.title()).toBe(`${heading} · Model Gateway`)
            for (const violation of await seriousViolations(page))
              failures.push(
                `${path}: ${violation.id} (${violation.impact}) ${violation.help} at ${violation.nodes.join(', ')}`,
              )
          }
          for (const path of ['/sign-in', '/setup']) {
            await page.context().clearCookies()
            await page.goto(path)
            await page.getByRole('heading', { level: 1 }).waitFor()
            for (const violation of await seriousViolations(page))
              failures.push(
                `${path}: ${violation.id} (${violation.impact}) ${violation.help} at ${violation.nodes.join(', ')}`,
              )
          }
          expect(failures).toEqual([])
        },
      )
    },
    database,
  )
