// Gateways on one PostgreSQL database: the in-process admission store keeps the balances in its own
// memory, so a gateway without REDIS_URL is the database's only one; gateways with Redis share it.
// Either way round, a start that would keep two sets of live balances is refused naming the settings.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp, type App } from '../../../../proxy/app.ts'
import { buildCatalog } from '../../../../proxy/core/catalog/catalog.ts'
import { ConfigError, loadConfig } from '../../../../proxy/core/config.ts'
import type { Database } from '../../../../proxy/stores/db/database.ts'
import {
  createTestDatabase,
  deleteRedisKeys,
  describeWith,
  redisUrl,
  uniqueName,
} from '../../../helpers/services.ts'

const catalog = buildCatalog(
  {
    providers: [{ id: 'demo', style: 'openai', builtin: 'echo' }],
    models: [
      {
        id: 'demo/echo',
        contextLength: 8192,
        maxOutputTokens: 1024,
        pricing: { inputPerMTok: 0, outputPerMTok: 0 },
        free: true,
        routes: [{ provider: 'demo', model: 'echo' }],
      },
    ],
  },
  {},
)

describeWith(['postgres', 'redis'], 'gateways on one PostgreSQL database', () => {
  let db: Database
  let dir: string
  const prefix = `${uniqueName('test:')}:`
  const started: App[] = []

  beforeAll(async () => {
    db = await createTestDatabase()
    dir = await mkdtemp(join(tmpdir(), 'gateway-store-claim-'))
  })
  afterAll(async () => {
    for (const app of started) await app.stop()
    await db?.close()
    await deleteRedisKeys(prefix)
    await rm(dir, { recursive: true, force: true })
  })

  const start = async (redis: boolean) => {
    const app = await createApp(
      loadConfig({
        DATA_DIR: dir,
        PORT: '0',
        SITE_PORT: '0',
        ADMIN_TOKEN: 'test-operator-token',
        DATABASE_URL: db.location,
        ...(redis ? { REDIS_URL: redisUrl!, REDIS_KEY_PREFIX: prefix } : {}),
      }),
      { catalog },
    )
    started.push(app)
    return app
  }
  const refusal = async (redis: boolean) => {
    const error = await start(redis).then(
      () => undefined,
      (failure: unknown) => failure,
    )
    expect(error).toBeInstanceOf(ConfigError)
    return (error as Error).message
  }

  test('a gateway without REDIS_URL is the only one: a second start is refused, with or without Redis', async () => {
    const alone = await start(false)
    expect(await refusal(false)).toContain(
      'is in use by another gateway, and without REDIS_URL this one would keep the balances in its own memory',
    )
    expect(await refusal(true)).toContain('is in use by a gateway without REDIS_URL')
    // Stopped, it lets the database go.
    await alone.stop()
    started.length = 0
  })

  test('gateways with Redis share the database, and one without Redis is refused beside them', async () => {
    await start(true)
    await start(true)
    const message = await refusal(false)
    expect(message).toStartWith(`DATABASE_URL (${db.location}) is in use by another gateway`)
    expect(message).toContain('Set the same REDIS_URL (and REDIS_KEY_PREFIX) on every gateway')
  })
})
