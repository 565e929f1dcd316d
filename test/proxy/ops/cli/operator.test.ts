// The operator's path, as an operator runs it: `bun run start` on embedded defaults (PGlite and the
// in-process store) in its own process, driven by `bun run admin`, with changes taking effect at once.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { nanoToUsd } from '../../../../shared/money.ts'
import { startFakeUpstream, type FakeUpstream } from '../../../helpers/fake-upstream/server.ts'
import { openRawStream } from '../../../helpers/raw-http.ts'
import { runAdminCli } from '../../../helpers/admin-cli.ts'
import { startServerProcess, type ServerProcess } from '../../../helpers/server-process.ts'

describe('operator commands against a running server on embedded defaults', () => {
  let upstream: FakeUpstream
  let dataDir: string
  let env: Record<string, string>
  let server: ServerProcess

  const startServer = () => startServerProcess(env)

  async function stopServer() {
    server.process.kill('SIGTERM')
    expect(await server.process.exited).toBe(0)
  }

  const admin = (...args: string[]) => runAdminCli({ ...env, SITE_URL: server.siteUrl }, args)

  const chat = (key: string) =>
    fetch(`${server.apiUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test/cheap', messages: [{ role: 'user', content: 'hello' }] }),
    })

  beforeAll(async () => {
    upstream = startFakeUpstream()
    dataDir = await mkdtemp(join(tmpdir(), 'gateway-operator-'))
    const catalog = join(dataDir, 'catalog.yaml')
    await Bun.write(
      catalog,
      `providers:
  - { id: fake, style: openai, baseUrl: "${upstream.url}/v1", apiKeyEnv: FAKE_PROVIDER_KEY }
models:
  - { id: test/cheap, contextLength: 100000, maxOutputTokens: 1000, pricing: { inputPerMTok: 1, outputPerMTok: 2 }, routes: [ { provider: fake, model: fake } ] }
  - { id: test/drip, contextLength: 100000, maxOutputTokens: 1000, pricing: { inputPerMTok: 1, outputPerMTok: 2 }, routes: [ { provider: fake, model: "fake?tokens=30&chunkDelay=1000" } ] }
`,
    )
    env = {
      PATH: process.env.PATH!,
      HOME: process.env.HOME ?? dataDir,
      DATA_DIR: dataDir,
      CATALOG_FILE: catalog,
      PORT: '0',
      SITE_PORT: '0',
      FAKE_PROVIDER_KEY: 'sk-fake',
      LOG_LEVEL: 'info',
      ACCOUNT_CONCURRENCY_LIMIT: '0',
    }
    server = await startServer()
  })
  afterAll(async () => {
    server.process.kill('SIGKILL')
    await upstream.stop()
    await rm(dataDir, { recursive: true, force: true })
  })

  test('the server says which stores it uses', () => {
    const text = server.output.join('')
    expect(text).toContain('database: embedded PGlite')
    expect(text).toContain('admission store: in-process')
  })

  test('accounts, credits and keys from the command line take effect at once, and survive a restart', async () => {
    const account = await admin('account', 'create', '--credit-usd', '5')
    expect(account.code).toBe(0)
    const accountId = account.json.accountId as string
    expect(accountId).toMatch(/^acct_/)

    const credited = await admin('credit', '--account', accountId, '--usd', '2.5')
    expect(credited.json).toMatchObject({
      amountNano: 2_500_000_000,
      availableNano: 7_500_000_000,
      availableUsd: '7.5',
    })

    const created = await admin(
      'key',
      'create',
      '--account',
      accountId,
      '--rpm',
      '100',
      '--daily-usd',
      '1',
      '--models',
      'test/cheap',
    )
    expect(created.json.key).toMatch(/^svc-live-[1-9A-HJ-NP-Za-km-z]{26}$/)
    const key = created.json.key as string

    const answer = await chat(key)
    expect(answer.status).toBe(200)
    const cost = Number((await answer.json()).usage.cost)
    expect(cost).toBeGreaterThan(0)

    const shown = await admin('account', 'show', '--account', accountId)
    expect(shown.json).toMatchObject({ accountId, heldNano: 0, inFlight: 0 })
    expect(shown.json.balanceNano).toBe(7_500_000_000 - Math.round(cost * 1e9))
    expect(shown.json.balanceUsd).toBe(nanoToUsd(shown.json.balanceNano as number))
    const keyView = (
      shown.json.keys as { id: string; daily: { spentNano: number; limitNano: number } }[]
    )[0]!
    expect(keyView).toMatchObject({
      id: created.json.id,
      heldUsd: '0',
      daily: { spentNano: Math.round(cost * 1e9), limitNano: 1_000_000_000, limitUsd: '1' },
    })
    // Every nano-USD amount has its decimal dollars beside it.
    expect(shown.json.ledgerBalanceUsd).toBe(nanoToUsd(shown.json.ledgerBalanceNano as number))

    expect((await admin('key', 'revoke', '--id', created.json.id as string)).json).toMatchObject({
      status: 'revoked',
    })
    expect((await chat(key)).status).toBe(401)

    await stopServer()
    server = await startServer()
    const reloaded = await admin('account', 'show', '--account', accountId)
    expect(reloaded.json.balanceNano).toBe(shown.json.balanceNano as number)
    expect(reloaded.json.ledgerBalanceNano).toBe(shown.json.balanceNano as number)
    expect((reloaded.json.keys as { daily: { spentNano: number } }[])[0]!.daily.spentNano).toBe(
      Math.round(cost * 1e9),
    )
  })

  test('more streams than a process’s fetch keeps in flight by default (256) run at once', async () => {
    const accountId = (await admin('account', 'create', '--credit-usd', '50')).json
      .accountId as string
    const key = (await admin('key', 'create', '--account', accountId)).json.key as string
    const body = JSON.stringify({
      model: 'test/drip',
      messages: [{ role: 'user', content: 'hello' }],
      stream: true,
    })
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
    const streams = await Promise.all(
      Array.from({ length: 300 }, () =>
        openRawStream(server.apiUrl, '/v1/chat/completions', headers, body),
      ),
    )
    try {
      const heads = await Promise.all(streams.map((stream) => stream.head))
      expect(heads.filter((head) => !head.startsWith('HTTP/1.1 200'))).toEqual([])
      // The gateway answers a stream only once the provider's first bytes arrived: all 300 are open upstream.
      expect(upstream.openStreams).toBe(300)
    } finally {
      for (const stream of streams) stream.close()
    }
    const until = Date.now() + 10_000
    while (upstream.openStreams > 0 && Date.now() < until) await Bun.sleep(50)
    expect(upstream.openStreams).toBe(0)
  })

  test('a bad command or a bad value is refused with the reason', async () => {
    const unknown = await admin('account', 'explode')
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('Unknown command: account explode')
    // A bad amount is refused before anything is sent; a value only the server can judge, by the server.
    const negative = await admin('credit', '--account', 'acct_x', '--usd=-5')
    expect(negative.code).toBe(2)
    expect(negative.stderr).toContain('--usd must be an amount in USD')
    const unknownModel = await admin(
      'key',
      'create',
      '--account',
      'acct_x',
      '--models',
      'test/nope',
    )
    expect(unknownModel.code).toBe(1)
    expect(JSON.parse(unknownModel.stderr).error).toMatchObject({
      code: 'invalid_request',
      param: 'allowedModels',
    })
    const missing = await admin('account', 'show', '--account', 'acct_missing')
    expect(JSON.parse(missing.stderr).error.code).toBe('not_found')
  })
})
