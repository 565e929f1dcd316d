// The command line's request: a server that takes the connection and never answers does not keep the
// operator waiting past the timeout; the gateway's API server named instead of its site server, or a
// SITE_URL that is not a URL, a credit of nothing or a negative number is named with what to set; a
// command's --help shows its own usage.
import { expect, test } from 'bun:test'
import { send } from '../../../../proxy/ops/admin-cli-request.ts'
import { runAdminCli } from '../../../helpers/admin-cli.ts'
import { runInRepository } from '../../../helpers/server-process.ts'

test('a server that never answers is given up on after the timeout, naming the address', async () => {
  const silent = Bun.listen({
    hostname: '127.0.0.1',
    port: 0,
    socket: { data() {}, open() {} },
  })
  try {
    const base = `http://127.0.0.1:${silent.port}`
    const started = Date.now()
    const sent = await send(
      base,
      { value: 'cli-operator-token', source: 'ADMIN_TOKEN' },
      { method: 'GET', path: '/providers' },
      300,
    )
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(sent.code).toBe(1)
    expect(JSON.parse(sent.stderr!).error).toEqual({
      code: 'unreachable',
      message: `No answer from ${base} within 0.3 s: is the server there stuck, or is SITE_URL another service?`,
    })
  } finally {
    silent.stop(true)
  }
})

test('the API server named instead of the site server is named so, with the setting to change', async () => {
  // What the API server answers on any path it does not serve: JSON, with its request ID.
  const api = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (request) =>
      Response.json(
        {
          error: {
            message: `No endpoint at GET ${new URL(request.url).pathname}.`,
            type: 'invalid_request_error',
            param: null,
            code: 'not_found',
          },
        },
        { status: 404, headers: { 'x-request-id': 'req_1' } },
      ),
  })
  try {
    const base = api.url.origin
    const sent = await send(
      base,
      { value: 'cli-operator-token', source: 'ADMIN_TOKEN' },
      { method: 'GET', path: '/accounts/acct_x' },
    )
    expect(sent.code).toBe(1)
    expect(JSON.parse(sent.stderr!).error).toEqual({
      code: 'not_operator_api',
      message: `${base} is the gateway's API server (PORT), not its site server, which serves the operator API: set SITE_URL (or SITE_PORT) to the site server.`,
    })
  } finally {
    await api.stop(true)
  }
})

test('a SITE_URL that is not an http URL is refused before anything is sent', async () => {
  for (const siteUrl of ['127.0.0.1:8081', 'localhost', 'ftp://127.0.0.1:8081']) {
    const result = await runAdminCli({ SITE_URL: siteUrl, ADMIN_TOKEN: 'cli-operator-token' }, [
      'provider',
      'list',
    ])
    expect(result.code).toBe(2)
    expect(result.stderr).toStartWith(
      `SITE_URL must be the site server's http:// or https:// URL, such as http://127.0.0.1:8081 (got ${siteUrl})`,
    )
  }
})

test('a credit of nothing is refused in dollars, before anything is sent', async () => {
  for (const usd of ['0', '0.000000000']) {
    const result = await runAdminCli(
      { SITE_URL: 'http://127.0.0.1:9', ADMIN_TOKEN: 'cli-operator-token' },
      ['credit', '--account', 'acct_x', '--usd', usd],
    )
    expect(result.code).toBe(2)
    expect(result.stderr).toStartWith(
      `--usd must be an amount in USD more than 0 and at most 9007199.254740991, in digits with at most 9 decimals, such as 5 or 0.25 (got ${usd})`,
    )
    expect(result.stderr).toContain('credit --account ID --usd N')
  }
})

test('a spend cap or budget of nothing is refused in dollars, pointing at none', async () => {
  const env = { SITE_URL: 'http://127.0.0.1:9', ADMIN_TOKEN: 'cli-operator-token' }
  for (const args of [
    ['key', 'create', '--account', 'acct_x', '--daily-usd', '0'],
    ['key', 'update', 'key_x', '--monthly-usd', '0'],
    ['guardrail', 'create', 'acct_x', '--name', 'g', '--budget-usd', '0.0'],
  ]) {
    const result = await runAdminCli(env, args)
    expect(result.code).toBe(2)
    expect(result.stderr).toStartWith(
      `${args.at(-2)} must be an amount in USD more than 0 and at most 9007199.254740991, in digits with at most 9 decimals, such as 5 or 0.25, or none for no cap (got ${args.at(-1)})`,
    )
  }
})

test('a negative number is refused as a value out of range, naming the option', async () => {
  const env = { SITE_URL: 'http://127.0.0.1:9', ADMIN_TOKEN: 'cli-operator-token' }
  const credit = await runAdminCli(env, ['credit', '--account', 'acct_x', '--usd', '-1'])
  expect(credit.code).toBe(2)
  // The range named is the one the option takes: a credit is more than 0.
  expect(credit.stderr).toStartWith(
    '--usd must be an amount in USD more than 0 and at most 9007199.254740991',
  )
  const rpm = await runAdminCli(env, ['key', 'create', '--account', 'acct_x', '--rpm', '-5'])
  expect(rpm.code).toBe(2)
  expect(rpm.stderr).toStartWith('--rpm must be a whole number up to 1000000000 (got -5)')
})

test('--help after a command shows that command’s usage; alone, every command', async () => {
  const help = async (...args: string[]) => {
    const { code, stdout } = await runInRepository(['bun', 'proxy/ops/admin-cli.ts', ...args], {
      PATH: process.env.PATH!,
    })
    expect(code).toBe(0)
    return stdout
  }
  const key = await help('key', 'create', '--help')
  expect(key).toContain('key create --account ID')
  expect(key).toContain('key revoke --id ID')
  expect(key).not.toContain('preset set')
  const all = await help('--help')
  expect(all).toContain('key create --account ID')
  expect(all).toContain('preset set ACCOUNT_ID SLUG')
  expect(all).toContain('support close TICKET_ID')
  // `help` as a command word works as --help does.
  expect(await help('help')).toBe(all)
  expect(await help('help', 'key')).toBe(key)
})

test('an unknown option is named plainly, and a pause needs how long it lasts, before anything is sent', async () => {
  const env = { SITE_URL: 'http://127.0.0.1:9', ADMIN_TOKEN: 'cli-operator-token' }
  const unknown = await runAdminCli(env, ['provider', 'list', '--bogus'])
  expect(unknown.code).toBe(2)
  expect(unknown.stderr).toStartWith('Unknown option: --bogus\n')
  for (const args of [[], ['--minutes', '5', '--until', '2030-01-01T00:00:00Z']]) {
    const pause = await runAdminCli(env, ['provider', 'pause', 'fake', ...args])
    expect(pause.code).toBe(2)
    expect(pause.stderr).toStartWith('Give either --minutes or --until: how long the pause lasts')
  }
  const zero = await runAdminCli(env, ['provider', 'pause', 'fake', '--minutes', '0'])
  expect(zero.code).toBe(2)
  expect(zero.stderr).toStartWith('--minutes must be a number more than 0, such as 0.5 (got 0)')
})

test("another command's option is refused by a command that does not take it, not dropped", async () => {
  const env = { SITE_URL: 'http://127.0.0.1:9', ADMIN_TOKEN: 'cli-operator-token' }
  // key create would otherwise make the key without the guardrail.
  const stray = await runAdminCli(env, ['key', 'create', '--account', 'acct_1', '--guardrail', 'g'])
  expect(stray.code).toBe(2)
  expect(stray.stderr).toStartWith('Unknown option for key create: --guardrail\n\nUsage:')
  expect(stray.stderr).toContain('  key create --account ID')
  const credit = await runAdminCli(env, [
    'credit',
    '--account',
    'acct_1',
    '--usd',
    '1',
    '--note',
    'x',
  ])
  expect(credit.stderr).toStartWith('Unknown option for credit: --note\n')
  // The options a command lists still reach the server (none answers here).
  const listed = await runAdminCli(env, [
    'payments',
    'list',
    '--account',
    'acct_1',
    '--state',
    'held',
  ])
  expect(listed.code).toBe(1)
  expect(listed.stderr).toContain('"code":"unreachable"')
})
