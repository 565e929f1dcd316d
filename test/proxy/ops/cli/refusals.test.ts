// What `bun run admin` says when a command cannot be done as typed: a value out of range, an argument
// in the wrong place, a wrong token, a server that is not there or not the operator API, a setting
// that cannot be read. Each refusal names what to change, exits non-zero and shows no stack trace.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  startGatewayOnOwnRedis,
  startTestGateway,
  testModel,
  type TestGateway,
} from '../../../helpers/gateway.ts'
import type { RedisProcess } from '../../../helpers/redis-process.ts'
import { describeWith } from '../../../helpers/services.ts'
import { runAdminCli } from '../../../helpers/admin-cli.ts'

const hello = [{ role: 'user', content: 'hello' }]

describeWith(['postgres', 'redis'], 'refusals of bun run admin', () => {
  let gw: TestGateway
  let siteUrl: string
  let dataDir: string

  const admin = (...args: string[]) =>
    runAdminCli({ SITE_URL: siteUrl, ADMIN_TOKEN: gw.app.operatorToken }, args)
  const error = (result: { stderr: string }) =>
    JSON.parse(result.stderr).error as { code: string; message: string; param?: string }

  beforeAll(async () => {
    gw = await startTestGateway({
      store: 'redis',
      database: 'postgres',
      models: [testModel('test/cheap', 'fake')],
    })
    siteUrl = gw.app.listen().siteUrl
    dataDir = await mkdtemp(join(tmpdir(), 'gateway-cli-refusals-'))
  })
  afterAll(async () => {
    await gw?.close()
    await rm(dataDir, { recursive: true, force: true })
  })

  test('a credit past the most a balance can hold is refused, and the account stays readable and usable', async () => {
    const accountId = await gw.account('1')
    const { key } = await gw.key(accountId)
    const near = await admin('credit', '--account', accountId, '--usd', '9007198')
    expect(near.code).toBe(0)

    const past = await admin('credit', '--account', accountId, '--usd', '2')
    expect(past.code).toBe(1)
    expect(error(past)).toMatchObject({ code: 'invalid_request', param: 'amountNano' })
    expect(error(past).message).toContain('9007199.254740991 USD, the most an account can hold')

    const shown = await admin('account', 'show', '--account', accountId)
    expect(shown.code).toBe(0)
    expect(shown.json.ledgerBalanceNano).toBe(9_007_199_000_000_000)
    expect((await gw.chat(key, { model: 'test/cheap', messages: hello })).status).toBe(200)
  })

  test('concurrent credits that together pass the most a balance can hold: one is written, the others refused', async () => {
    const accountId = await gw.account('0')
    const credit = () =>
      fetch(`${siteUrl}/operator/v1/accounts/${accountId}/credits`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${gw.app.operatorToken}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ amountNano: 5_000_000_000_000_000 }),
      })
    const answers = await Promise.all(Array.from({ length: 10 }, credit))
    expect(answers.map((answer) => answer.status).sort()).toEqual([
      200, 400, 400, 400, 400, 400, 400, 400, 400, 400,
    ])
    const refused = answers.find((answer) => answer.status === 400)!
    expect(((await refused.json()) as { error: { param: string } }).error.param).toBe('amountNano')
    const shown = await admin('account', 'show', '--account', accountId)
    expect(shown.code).toBe(0)
    expect(shown.json.ledgerBalanceNano).toBe(5_000_000_000_000_000)
    expect(shown.json.balanceNano).toBe(5_000_000_000_000_000)
  })

  test('a number too large for its option is refused before anything is sent', async () => {
    const rpm = await admin('key', 'update', 'key_x', '--rpm', '99999999999999999999')
    expect(rpm.code).toBe(2)
    expect(rpm.stderr).toStartWith(
      '--rpm must be a whole number up to 1000000000 (got 99999999999999999999)',
    )
    const concurrency = await admin(
      'key',
      'create',
      '--account',
      'acct_x',
      '--concurrency',
      '3000000000',
    )
    expect(concurrency.code).toBe(2)
    expect(concurrency.stderr).toStartWith(
      '--concurrency must be a whole number up to 1000000000 (got 3000000000)',
    )
    const tokens = await admin(
      'preset',
      'set',
      'acct_x',
      'p',
      '--model',
      'test/cheap',
      '--max-tokens',
      '1e20',
    )
    expect(tokens.stderr).toStartWith(
      '--max-tokens must be a whole number from 0 to 9007199254740991 (got 1e20)',
    )
    const usd = await admin('credit', '--account', 'acct_x', '--usd', '10000000')
    expect(usd.code).toBe(2)
    expect(usd.stderr).toStartWith(
      '--usd must be an amount in USD more than 0 and at most 9007199.254740991, in digits with at most 9 decimals, such as 5 or 0.25 (got 10000000)',
    )
    const negative = await admin('preset', 'set', 'acct_x', 'p', '--model', 'm', '--temperature=-1')
    expect(negative.stderr).toStartWith('--temperature must be a number of at least 0')
  })

  test('an argument in the wrong place is named, with the usage of that command only', async () => {
    const revoke = await admin('key', 'revoke', 'key_x')
    expect(revoke.code).toBe(2)
    expect(revoke.stderr).toStartWith(
      'key revoke names its records with options, not positionally (got key_x)',
    )
    expect(revoke.stderr).toContain('key revoke --id ID')
    expect(revoke.stderr).not.toContain('preset set')

    const extra = await admin('provider', 'list', 'everything')
    expect(extra.code).toBe(2)
    expect(extra.stderr).toStartWith('Unexpected argument: everything')
    expect(extra.stderr).toContain('provider pause PROVIDER_ID')
    expect(extra.stderr).not.toContain('key create')
  })

  test('a wrong operator token is refused naming where the command line read it', async () => {
    const refused = await runAdminCli({ SITE_URL: siteUrl, ADMIN_TOKEN: 'not-the-server-token' }, [
      'provider',
      'list',
    ])
    expect(refused.code).toBe(1)
    expect(error(refused).code).toBe('unauthorized')
    expect(error(refused).message).toContain('refused the operator token from ADMIN_TOKEN')

    await Bun.write(join(dataDir, 'admin-token'), 'stale-token\n')
    const stale = await runAdminCli({ SITE_URL: siteUrl, DATA_DIR: dataDir }, ['provider', 'list'])
    expect(error(stale).message).toContain(
      `the operator token from ${join(dataDir, 'admin-token')}`,
    )
  })

  test('no token to send is named with where it was looked for, before anything is sent', async () => {
    const result = await runAdminCli({ SITE_URL: siteUrl, DATA_DIR: join(dataDir, 'empty') }, [
      'provider',
      'list',
    ])
    expect(result.code).toBe(2)
    expect(result.stderr).toStartWith(
      `No operator token: ${join(dataDir, 'empty', 'admin-token')} does not exist. Set ADMIN_TOKEN to the one the server was started with`,
    )
  })

  test('a server that is not there, or not the operator API, is named with what to set', async () => {
    const absent = await runAdminCli(
      { SITE_URL: 'http://127.0.0.1:9', ADMIN_TOKEN: 'cli-operator-token' },
      ['provider', 'list'],
    )
    expect(absent.code).toBe(1)
    expect(error(absent)).toMatchObject({ code: 'unreachable' })
    expect(error(absent).message).toContain('Start it with bun run start, or set SITE_URL')

    const page = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: () => new Response('<!doctype html>', { headers: { 'content-type': 'text/html' } }),
    })
    try {
      const other = await runAdminCli(
        { SITE_URL: page.url.origin, ADMIN_TOKEN: 'cli-operator-token' },
        ['provider', 'list'],
      )
      expect(other.code).toBe(1)
      expect(error(other).code).toBe('not_operator_api')
      expect(error(other).message).toContain('answered 200 with text/html, not the operator API')
    } finally {
      await page.stop(true)
    }
  })

  test('a setting that cannot be read is named without a stack trace', async () => {
    const result = await runAdminCli({ SITE_PORT: 'eighty', ADMIN_TOKEN: 'cli-operator-token' }, [
      'provider',
      'list',
    ])
    expect(result.code).toBe(2)
    expect(result.stderr).toBe(
      'Invalid configuration:\n  SITE_PORT: must be a whole number (got "eighty")',
    )
  })
})

describeWith('postgres', 'bun run admin while the admission store does not answer', () => {
  let gw: TestGateway & { redis: RedisProcess }
  let siteUrl: string

  const admin = (...args: string[]) =>
    runAdminCli({ SITE_URL: siteUrl, ADMIN_TOKEN: gw.app.operatorToken }, args)

  beforeAll(async () => {
    gw = await startGatewayOnOwnRedis({ models: [testModel('test/cheap', 'fake')] })
    siteUrl = gw.app.listen().siteUrl
  })
  afterAll(() => gw?.close())

  test('credits and balances are refused with nothing written, saying so', async () => {
    const accountId = await gw.account('1')
    const ledger = async () =>
      (
        await gw.app.database.sql<{ rows: number }[]>`
          SELECT count(*)::int AS rows FROM ledger WHERE account_id = ${accountId}`
      )[0]!.rows
    const accounts = async () =>
      (
        await gw.app.database.sql<{ rows: number }[]>`SELECT count(*)::int AS rows FROM accounts`
      )[0]!.rows
    const [rowsBefore, accountsBefore] = [await ledger(), await accounts()]
    await gw.redis.kill()

    const credit = await admin('credit', '--account', accountId, '--usd', '5')
    expect(credit.code).toBe(1)
    expect(JSON.parse(credit.stderr).error.code).toBe('admission_unconfirmed')
    expect(JSON.parse(credit.stderr).error.message).toContain(
      'so nothing was credited. Retry once GET /readyz answers ready.',
    )
    const created = await admin('account', 'create', '--credit-usd', '5')
    expect(JSON.parse(created.stderr).error.message).toContain('so no account was made')
    const shown = await admin('account', 'show', '--account', accountId)
    expect(JSON.parse(shown.stderr).error.message).toContain('so the live balance cannot be read')

    expect(await ledger()).toBe(rowsBefore)
    expect(await accounts()).toBe(accountsBefore)
  })
})
