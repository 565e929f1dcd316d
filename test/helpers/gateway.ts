/**
 * A whole gateway for tests: a catalog pointing at a fake upstream, a database (a fresh database on the
 * test Postgres, or the embedded one), an admission store (Redis or in-process), and helpers to create
 * accounts and keys through the operator services and to call the API.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createAccount } from '../../proxy/accounts/accounts.ts'
import { createKey } from '../../proxy/accounts/keys.ts'
import type { NewApiKey } from '../../shared/schemas/admin/keys.ts'
import { createApp, type App } from '../../proxy/app.ts'
import { buildCatalog } from '../../proxy/core/catalog/catalog.ts'
import type { CatalogModel } from '../../proxy/core/catalog/catalog-schema.ts'
import { loadConfig } from '../../proxy/core/config.ts'
import { startEmbedded } from '../../proxy/stores/db/database.ts'
import { usdToNano } from '../../shared/money.ts'
import { startFakeUpstream, type FakeUpstream } from './fake-upstream/server.ts'
import { redisServerBinary, startRedisProcess, type RedisProcess } from './redis-process.ts'
import { createTestDatabase, deleteRedisKeys, redisUrl, uniqueName } from './services.ts'

/** USD 1 and 2 per million tokens: 1,000 nano per input token, 2,000 per output token. */
export const cheapPricing = { inputPerMTok: 1, outputPerMTok: 2 }

export function testModel(
  id: string,
  upstreamModel: string,
  overrides: Partial<CatalogModel> = {},
): CatalogModel {
  return {
    id,
    contextLength: 100_000,
    maxOutputTokens: 1_000,
    pricing: cheapPricing,
    routes: [{ provider: 'fake', model: upstreamModel }],
    ...overrides,
  }
}

/** A test model served by the Anthropic-style fake provider. */
export function anthropicTestModel(
  id: string,
  upstreamModel: string,
  overrides: Partial<CatalogModel> = {},
): CatalogModel {
  return testModel(id, upstreamModel, {
    routes: [{ provider: 'fake-anthropic', model: upstreamModel }],
    ...overrides,
  })
}

export type TestGatewayOptions = {
  store: 'memory' | 'redis'
  database: 'postgres' | 'embedded'
  models?: CatalogModel[]
  /** Catalog sections beside providers and models: aliases, auto, images. */
  catalog?: Record<string, unknown>
  env?: Record<string, string>
  /** Another test gateway whose database, Redis prefix and fake upstream this one shares (a second process). */
  sibling?: TestGateway
}

export type TestGateway = {
  app: App
  upstream: FakeUpstream
  account(usd: string): Promise<string>
  /** A key without spend caps unless `options` sets them (the admin API's fields). */
  key(accountId: string, options?: NewApiKey): Promise<{ id: string; key: string }>
  /** POST /v1/chat/completions through the API server's handler. */
  chat(
    key: string | undefined,
    body: unknown,
    init?: { headers?: Record<string, string>; signal?: AbortSignal },
  ): Promise<Response>
  close(): Promise<void>
}

export async function startTestGateway(options: TestGatewayOptions): Promise<TestGateway> {
  const upstream = options.sibling?.upstream ?? startFakeUpstream()
  const dataDir = await mkdtemp(join(tmpdir(), 'gateway-test-'))
  const models = options.models ?? [
    testModel('test/cheap', 'fake'),
    testModel('test/other', 'fake'),
  ]
  const catalog = buildCatalog(
    {
      providers: [
        {
          id: 'fake',
          style: 'openai',
          baseUrl: `${upstream.url}/v1`,
          apiKeyEnv: 'FAKE_PROVIDER_KEY',
        },
        {
          id: 'fake-anthropic',
          style: 'anthropic',
          baseUrl: upstream.url,
          apiKeyEnv: 'FAKE_PROVIDER_KEY',
        },
        // A second OpenAI-style provider (the same fake), for routes and provider preferences.
        {
          id: 'fake-b',
          style: 'openai',
          baseUrl: `${upstream.url}/v1`,
          apiKeyEnv: 'FAKE_PROVIDER_KEY',
        },
        // Configured in the catalog, but its key variable is not set: its routes are skipped.
        {
          id: 'unkeyed',
          style: 'openai',
          baseUrl: `${upstream.url}/v1`,
          apiKeyEnv: 'UNSET_PROVIDER_KEY',
        },
        // A server that takes no key (a local one), and the demo provider built into the gateway.
        { id: 'keyless', style: 'openai', baseUrl: `${upstream.url}/v1` },
        { id: 'demo', style: 'openai', builtin: 'echo' },
      ],
      models,
      ...options.catalog,
    },
    { FAKE_PROVIDER_KEY: 'sk-fake-provider' },
  )
  const database =
    options.sibling?.app.database ??
    (options.database === 'postgres'
      ? await createTestDatabase()
      : await startEmbedded('memory://'))
  const redisPrefix = options.sibling?.app.config.REDIS_KEY_PREFIX || `${uniqueName('test:')}:`
  const config = loadConfig({
    DATA_DIR: dataDir,
    PORT: '0',
    SITE_PORT: '0',
    ADMIN_TOKEN: 'test-operator-token',
    LEDGER_FLUSH_MS: '10',
    // Tests close gateways with requests possibly still open: cut them at once (drain tests set their own).
    SHUTDOWN_DRAIN_MS: '0',
    ...(options.store === 'redis' ? { REDIS_URL: redisUrl!, REDIS_KEY_PREFIX: redisPrefix } : {}),
    ...options.env,
  })
  const app = await createApp(config, { catalog, database })
  app.gateway.writer.start()
  return {
    app,
    upstream,
    async account(usd) {
      return (await createAccount(app.operator, { creditNano: usdToNano(usd) })).accountId
    },
    async key(accountId, keyOptions = {}) {
      const created = await createKey(app.operator, accountId, {
        dailyLimitNano: null,
        monthlyLimitNano: null,
        ...keyOptions,
      })
      return { id: created.id, key: created.key }
    },
    chat(key, body, init = {}) {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        ...init.headers,
      }
      if (key) headers.authorization = `Bearer ${key}`
      return app.api.handle(
        new Request('http://gateway.test/v1/chat/completions', {
          method: 'POST',
          headers,
          body: typeof body === 'string' ? body : JSON.stringify(body),
          signal: init.signal,
        }),
      )
    },
    async close() {
      await app.stop()
      if (!options.sibling) {
        await database.close()
        await upstream.stop()
        if (config.REDIS_URL === redisUrl && config.REDIS_KEY_PREFIX)
          await deleteRedisKeys(config.REDIS_KEY_PREFIX)
      }
      await rm(dataDir, { recursive: true, force: true })
    },
  }
}

/** Reads a whole SSE response into its data payloads (comments, the keep-alives, skipped). */
export async function readEvents(response: Response): Promise<string[]> {
  const text = await response.text()
  return text
    .split('\n\n')
    .filter((event) => event !== '' && !event.startsWith(':'))
    .map((event) => event.replace(/^data: /, ''))
}

/** A gateway whose admission store is a private Redis the test may pause or kill (closed with the gateway). */
export async function startGatewayOnOwnRedis(
  options: Partial<TestGatewayOptions> = {},
): Promise<TestGateway & { redis: RedisProcess }> {
  if (!redisServerBinary) throw new Error('redis-server is needed for this suite')
  const redis = await startRedisProcess()
  const gw = await startTestGateway({
    store: 'memory',
    database: 'postgres',
    ...options,
    env: { REDIS_URL: redis.url, ADMISSION_TIMEOUT_MS: '200', ...options.env },
  })
  return {
    ...gw,
    redis,
    async close() {
      await gw.close().catch(() => undefined)
      await redis.kill()
    },
  }
}
