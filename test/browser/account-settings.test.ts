// Account settings in a real browser: the owner sets the account-level limits on the routing page and
// the next request obeys them; the owner of an accountless account replaces its dashboard link (shown
// once; the old one no longer opens the account) and revokes it; activity shows what a guardrail
// redacted; the alerts card lists a delivery that is being tried again and warns when mail goes to a file.
import { afterAll, beforeAll, expect } from 'bun:test'
import { createAccountless } from '../../proxy/accounts/people/accountless.ts'
import {
  browserTest,
  chat,
  describeBrowser,
  seriousViolations,
  signedInAs,
  startSite,
  type Site,
} from './helpers/browser.ts'

const signedIn = (site: Site, accountId: string) =>
  signedInAs(site, accountId, 'owner', `owner-${accountId}@people.test`)

describeBrowser(
  'account settings in the dashboard',
  () => {
    let site: Site
    beforeAll(async () => {
      site = await startSite({ database: 'embedded' })
    })
    afterAll(() => site?.close())

    browserTest(
      'account limits: saved from the routing page, refused values named, applied to the next request',
      () => site,
      async () => {
        const accountId = await site.gw.account('5')
        const { key } = await site.gw.key(accountId)
        const page = await signedIn(site, accountId)
        await page.goto('/dashboard/routing')
        const rpm = page.getByLabel('Requests per minute')
        expect(await rpm.inputValue()).toBe('')
        await page
          .getByText(
            `Empty: the service's default, now ${site.gw.app.config.ACCOUNT_RPM_LIMIT.toLocaleString('en-US')}`,
          )
          .first()
          .waitFor()
        await page.getByLabel('Requests at once').fill('-3')
        await page.getByRole('button', { name: 'Save limits' }).click()
        // The refusal marks the field once the answer arrives.
        await page
          .getByLabel('Requests at once')
          .and(page.locator('[aria-invalid="true"]'))
          .waitFor()
        await page.getByLabel('Requests at once').fill('')
        await rpm.fill('1')
        await page.getByRole('button', { name: 'Save limits' }).click()
        await page.getByText('In force: 1.').waitFor()
        const hello = { model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }] }
        expect((await chat(site, key, hello)).status).toBe(200)
        expect((await chat(site, key, hello)).status).toBe(429)
        expect(await seriousViolations(page)).toEqual([])
      },
    )

    browserTest(
      'a key form refuses a limit or cap of 0 (none is empty, or “No cap”), naming the field',
      () => site,
      async () => {
        const accountId = await site.gw.account('5')
        const page = await signedIn(site, accountId)
        await page.goto('/dashboard/keys')
        await page.getByRole('button', { name: 'Create key' }).click()
        await page.getByLabel('Name', { exact: true }).fill('zero')
        const invalid = (label: string) =>
          page.getByLabel(label).and(page.locator('[aria-invalid="true"]'))
        await page.getByLabel('Daily spend cap (USD)').fill('0')
        await page.getByRole('button', { name: 'Create', exact: true }).click()
        await invalid('Daily spend cap (USD)').waitFor()
        await page.getByText('Enter a daily cap above zero, or choose “No daily cap”.').waitFor()
        await page.getByLabel('Daily spend cap (USD)').fill('')
        await page.getByLabel('Requests per minute').fill('0')
        await page.getByRole('button', { name: 'Create', exact: true }).click()
        await invalid('Requests per minute').waitFor()
        await page.getByLabel('Requests per minute').fill('')
        await page.getByRole('button', { name: 'Create', exact: true }).click()
        expect(await page.getByLabel('API key', { exact: true }).inputValue()).toMatch(/^svc-live-/)
        expect(await seriousViolations(page)).toEqual([])
      },
    )

    browserTest(
      'the dashboard link of an accountless account: replaced (shown once, the old one ends) and revoked',
      () => site,
      async () => {
        const { linkSecret } = await createAccountless(site.gw.app.operator)
        const { page } = await site.open()
        await page.goto(`/dashboard#link=${linkSecret}`)
        await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
        await page.goto('/dashboard/team')
        await page.getByRole('button', { name: 'Replace link' }).click()
        await page.getByRole('dialog').getByRole('button', { name: 'Replace' }).click()
        const fresh = await page.getByLabel('New dashboard link', { exact: true }).inputValue()
        expect(fresh).toContain('/dashboard#link=')
        const exchange = (secret: string) =>
          fetch(`${site.siteUrl}/admin/v1/session/link`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', origin: site.siteUrl },
            body: JSON.stringify({ secret }),
          }).then((response) => response.status)
        expect(await exchange(linkSecret)).toBe(401)
        expect(await exchange(fresh.split('#link=')[1]!)).toBe(200)
        // This browser stays signed in.
        await page.reload()
        await page.getByRole('heading', { level: 1, name: 'Team' }).waitFor()
        await page.getByRole('button', { name: 'Revoke link' }).click()
        await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click()
        await page.getByText('Dashboard link revoked.').waitFor()
        expect(await exchange(fresh.split('#link=')[1]!)).toBe(401)
      },
    )

    browserTest(
      'activity shows what the guardrail redacted; the alerts card lists deliveries',
      () => site,
      async () => {
        const accountId = await site.gw.account('5')
        await site.gw.app.operator
          .sql`UPDATE accounts SET kind = 'identity' WHERE id = ${accountId}`
        const { key, id: keyId } = await site.gw.key(accountId)
        const { sql } = site.gw.app.operator
        await sql`INSERT INTO guardrails (id, account_id, name, filters) VALUES (${`gr_${accountId}`}, ${accountId}, 'mail', ${sql.json([{ detector: 'email', action: 'redact' }] as never)})`
        await sql`UPDATE api_keys SET guardrail_id = ${`gr_${accountId}`} WHERE id = ${keyId}`
        await site.gw.app.gateway.keys.invalidate({ accountId })
        const answer = await chat(site, key, {
          model: 'test/cheap',
          messages: [{ role: 'user', content: 'write to a@example.com and b@example.com' }],
        })
        expect(answer.headers.get('x-service-guardrail-redactions')).toBe('email=2')
        await sql`INSERT INTO alert_deliveries (account_id, channel, recipient, message, attempts, last_error, next_attempt_at)
        VALUES (${accountId}, 'email', 'owner@people.test', ${sql.json({ subject: 's', text: 't' } as never)}, 2, '451 Mailbox busy', now() + interval '1 hour')`
        const page = await signedIn(site, accountId)
        await page.goto('/dashboard/activity')
        await page.getByText('Redacted:').waitFor()
        expect(await page.getByText('email=2').count()).toBe(1)
        await page.goto('/dashboard/billing')
        const deliveries = page.getByRole('table', { name: 'Latest alert messages' })
        await deliveries.getByText('Trying again').waitFor()
        await deliveries.getByText('2 attempts: 451 Mailbox busy').waitFor()
        // This site has a mail server: no warning about mail going to a file.
        expect(await page.getByText('This server sends no e-mail').count()).toBe(0)
        expect(await seriousViolations(page)).toEqual([])
      },
    )
  },
  'embedded',
)

describeBrowser(
  'alerts without a mail server',
  () => {
    let site: Site
    beforeAll(async () => {
      site = await startSite({ database: 'embedded', env: { SMTP_URL: '' } })
    })
    afterAll(() => site?.close())

    browserTest(
      'the alerts card warns that e-mail goes to a file',
      () => site,
      async () => {
        const accountId = await site.gw.account('5')
        await site.gw.app.operator
          .sql`UPDATE accounts SET kind = 'identity' WHERE id = ${accountId}`
        const page = await signedIn(site, accountId)
        await page.goto('/dashboard/billing')
        await page.getByText('This server sends no e-mail').waitFor()
      },
    )
  },
  'embedded',
)
