/**
 * Browser tests of the dashboard: the built SPA served by a real gateway (Postgres, the in-process or
 * Redis store, a real SMTP server for mail), driven in Debian's headless Chromium through
 * playwright-core. A failing test leaves a screenshot under test-output/browser/. Accessibility is
 * checked with axe-core run inside the page.
 */
import { describe, test } from 'bun:test'
import { mkdir, rm } from 'node:fs/promises'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import {
  startTestGateway,
  type TestGateway,
  type TestGatewayOptions,
} from '../../helpers/gateway.ts'
import { startSmtpServer, type TestSmtp } from '../../helpers/smtp.ts'
import { sessionFor } from '../../helpers/admin.ts'
import { cheapBotCheck } from '../../helpers/altcha.ts'
import { describeWith } from '../../helpers/services.ts'

const ROOT = join(import.meta.dir, '..', '..', '..')
const OUTPUT = join(ROOT, 'test-output', 'browser')
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium'

/**
 * describe() for browser suites: they need Chromium, and Postgres unless they run on the embedded database. Without Chromium they are skipped,
 * unless REQUIRE_SERVICES=1 (CI installs Chromium), which makes its absence a failure.
 */
export function describeBrowser(
  name: string,
  body: () => void,
  database: 'postgres' | 'embedded' = 'postgres',
): void {
  if (existsSync(CHROMIUM))
    return database === 'postgres' ? describeWith('postgres', name, body) : describe(name, body)
  if (process.env.REQUIRE_SERVICES !== '1')
    return describe.skip(`${name} (install chromium to run)`, body)
  describe(name, () => {
    test('chromium installed', () => {
      throw new Error(
        `no Chromium at ${CHROMIUM} and REQUIRE_SERVICES=1: install Debian's chromium package`,
      )
    })
  })
}

let built: Promise<void> | undefined

const DASHBOARD = join(ROOT, 'dashboard')
/** The sources the build of `dashboard/dist` was made from, by hash. */
const BUILT_FROM = join(DASHBOARD, 'dist', '.built-from')
/** Held (a directory: made atomically) by the process building, so two test files never build at once. */
const BUILD_LOCK = join(DASHBOARD, '.build-lock')

/** A hash of everything the dashboard's build reads: its sources, its configuration and the lockfile. */
async function dashboardSources(): Promise<string> {
  const hash = new Bun.CryptoHasher('sha256')
  const files = [...new Bun.Glob('**/*').scanSync({ cwd: DASHBOARD, dot: true })]
    .filter((file) => !file.startsWith('dist/') && !file.startsWith('.build-lock'))
    .sort()
  for (const file of [...files.map((file) => join(DASHBOARD, file)), join(ROOT, 'bun.lock')])
    hash.update(file).update(await Bun.file(file).arrayBuffer())
  return hash.digest('hex')
}

/**
 * Builds the dashboard as `bun run build` does, once for its sources: test files run at the same time
 * (or one after another) share the build rather than emptying `dist` under each other's pages.
 */
export function buildDashboard(): Promise<void> {
  built ??= (async () => {
    const sources = await dashboardSources()
    const current = async () =>
      (await Bun.file(BUILT_FROM).exists()) && (await Bun.file(BUILT_FROM).text()) === sources
    if (await current()) return
    for (let waited = 0; ; waited += 100) {
      try {
        await mkdir(BUILD_LOCK)
        break
      } catch {
        // Another file is building; a lock older than a build can take was left by a killed run.
        if (waited > 120_000) await rm(BUILD_LOCK, { recursive: true, force: true })
        await Bun.sleep(100)
      }
    }
    try {
      if (await current()) return
      const build = Bun.spawn(['bun', 'x', 'vite', 'build', 'dashboard', '--logLevel', 'error'], {
        cwd: ROOT,
        stdout: 'pipe',
        stderr: 'pipe',
      })
      if ((await build.exited) !== 0)
        throw new Error(`dashboard build failed:\n${await new Response(build.stderr).text()}`)
      await Bun.write(BUILT_FROM, sources)
    } finally {
      await rm(BUILD_LOCK, { recursive: true, force: true })
    }
  })()
  return built
}

export type Site = {
  gw: TestGateway
  smtp: TestSmtp
  browser: Browser
  /** The site's origin, e.g. http://127.0.0.1:PORT. */
  siteUrl: string
  apiUrl: string
  /** A fresh browser profile (cookies, storage) with one page. */
  open(): Promise<{ context: BrowserContext; page: Page }>
  /** Closes every profile opened so far (each test ends with its own closed). */
  closeProfiles(): Promise<void>
  /**
   * What went wrong inside the pages since the last call: uncaught errors and Content-Security-Policy
   * refusals (a browser test fails on any).
   */
  takePageErrors(): string[]
  close(): Promise<void>
}

export async function startSite(options: Partial<TestGatewayOptions> = {}): Promise<Site> {
  await buildDashboard()
  const smtp = await startSmtpServer()
  const gw = await startTestGateway({
    store: 'memory',
    database: 'postgres',
    ...options,
    env: { SMTP_URL: smtp.url, ...cheapBotCheck, LEDGER_FLUSH_MS: '10', ...options.env },
  })
  const { apiUrl, siteUrl } = gw.app.listen()
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  })
  const contexts: BrowserContext[] = []
  const pageErrors: string[] = []
  const closeProfiles = async () => {
    for (const context of contexts.splice(0)) await context.close().catch(() => undefined)
  }
  return {
    gw,
    smtp,
    browser,
    siteUrl,
    apiUrl,
    async open() {
      const context = await browser.newContext({
        baseURL: siteUrl,
        viewport: { width: 1280, height: 900 },
      })
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: siteUrl })
      contexts.push(context)
      const page = await context.newPage()
      page.on('pageerror', (error) => pageErrors.push(`uncaught: ${error.message}`))
      page.on('console', (message) => {
        if (message.type() === 'error' && /Content Security Policy/i.test(message.text()))
          pageErrors.push(
            `${message.text()} (at ${message.location().url} line ${message.location().lineNumber})`,
          )
      })
      // Generous for a loaded 2-core CI machine; a wait that is met returns at once.
      page.setDefaultTimeout(20_000)
      return { context, page }
    },
    closeProfiles,
    takePageErrors: () => pageErrors.splice(0),
    async close() {
      await closeProfiles()
      await browser.close()
      await gw.close()
      await smtp.close()
    },
  }
}

/**
 * A browser test: it fails on an uncaught error or a Content-Security-Policy refusal in any of its pages;
 * on failure, every page it opened is saved as a screenshot named after the test before
 * the error is reported; its browser profiles are closed either way.
 */
export function browserTest(
  name: string,
  site: () => Site,
  body: () => Promise<void>,
  timeoutMs = 60_000,
): void {
  test(
    name,
    async () => {
      site().takePageErrors()
      try {
        await body()
        const errors = site().takePageErrors()
        if (errors.length > 0) throw new Error(`errors in the page:\n${errors.join('\n')}`)
      } catch (error) {
        await screenshots(site(), name)
        throw error
      } finally {
        await site()?.closeProfiles()
      }
    },
    timeoutMs,
  )
}

async function screenshots(site: Site | undefined, name: string): Promise<void> {
  if (!site) return
  await mkdir(OUTPUT, { recursive: true })
  const slug = name
    .replace(/[^a-z0-9]+/gi, '-')
    .replace(/^-|-$/g, '')
    .toLowerCase()
  let index = 0
  for (const context of site.browser.contexts()) {
    for (const page of context.pages()) {
      await page
        .screenshot({
          path: join(OUTPUT, `${slug}${index ? `-${index}` : ''}.png`),
          fullPage: true,
        })
        .catch(() => undefined)
      index++
    }
  }
}

const axeSource = readFileSync(join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8')

export type Violation = { id: string; impact: string; help: string; nodes: string[] }

/** axe-core's serious and critical violations on the page as it is now. */
export async function seriousViolations(page: Page): Promise<Violation[]> {
  // Evaluated through the DevTools protocol, not as a <script>: the page's CSP allows only its own scripts.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource)
  return page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run(
            context: Document,
            options: object,
          ): Promise<{
            violations: {
              id: string
              impact: string | null
              help: string
              nodes: { target: unknown[] }[]
            }[]
          }>
        }
      }
    ).axe
    const result = await axe.run(document, { resultTypes: ['violations'] })
    return result.violations
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map((violation) => ({
        id: violation.id,
        impact: violation.impact!,
        help: violation.help,
        nodes: violation.nodes.map((node) => JSON.stringify(node.target)),
      }))
  })
}

/** Signs in by e-mail as a user would: the form, the mail from the SMTP server, the confirm page. */
export async function signInByEmail(site: Site, page: Page, email: string): Promise<void> {
  await page.goto('/sign-in')
  await page.getByLabel('E-mail address').fill(email)
  await page.getByRole('button', { name: 'Send sign-in link' }).click()
  await page.getByText('Check your inbox').waitFor()
  const mail = await site.smtp.next(email)
  const link = /https?:\/\/[^\s"<>]+\/auth\/email\?token=[A-Za-z0-9_%-]+/.exec(mail.text)
  if (!link) throw new Error(`no sign-in link in the mail:\n${mail.text}`)
  await page.goto(link[0])
  await page.getByRole('button').first().click()
  await page.waitForURL(/\/dashboard/)
  await page.getByRole('heading', { level: 1 }).waitFor()
}

/** The account the page's session acts for (the shell shows its ID). */
export async function accountOf(page: Page): Promise<string> {
  const me = await page.evaluate(async () => (await fetch('/admin/v1/me')).json())
  return (me as { account: { id: string } }).account.id
}

/** POST /v1/chat/completions on the API server with a key. */
export function chat(site: Site, key: string, body: unknown): Promise<Response> {
  return fetch(`${site.apiUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
}

/** A page of a new browser profile signed in to the account with this role (a session of a new user). */
export async function signedInAs(
  site: Site,
  accountId: string,
  role: 'owner' | 'admin' | 'member',
  email?: string,
): Promise<Page> {
  const session = await sessionFor(site.gw, accountId, role, email)
  const { context, page } = await site.open()
  const [name, value] = session.cookie.split('=') as [string, string]
  await context.addCookies([{ name, value, url: site.siteUrl }])
  return page
}

/** A page signed in as the owner of a new account holding USD 5. */
export async function ownerPage(site: Site): Promise<{ page: Page; accountId: string }> {
  const accountId = await site.gw.account('5')
  return { page: await signedInAs(site, accountId, 'owner'), accountId }
}
