/**
 * The stores the gateway runs on during a benchmark. With DATABASE_URL, a fresh database on that server
 * (dropped at the end); with REDIS_URL, a unique key prefix (its keys deleted at the end). Without them
 * the gateway uses its embedded PGlite and in-process admission store.
 */
import Redis from 'ioredis'
import postgres from 'postgres'
import { cleanup } from './processes.ts'

/** The environment the gateway gets for its stores, and a description of them for the report. */
export type BenchStores = {
  env: Record<string, string>
  database: string
  admission: string
  /** True when both are the real servers (the configuration the throughput target is about). */
  real: { postgres: boolean; redis: boolean }
}

/** Prepares the stores named by DATABASE_URL and REDIS_URL (either may be empty); registers their removal. */
export async function prepareStores(
  databaseUrl: string | undefined,
  redisUrl: string | undefined,
  runId: string,
): Promise<BenchStores> {
  const stores: BenchStores = {
    env: {},
    database: 'embedded PGlite (in the gateway process)',
    admission: 'in-process admission store',
    real: { postgres: false, redis: false },
  }
  if (databaseUrl) {
    const name = `bench_${runId}`
    const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} })
    const [{ server_version: version } = { server_version: '?' }] = await admin<
      { server_version: string }[]
    >`SHOW server_version`
    await admin.unsafe(`CREATE DATABASE ${name}`)
    cleanup.add(`drop database ${name}`, async () => {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await admin.end({ timeout: 5 })
    })
    const url = new URL(databaseUrl)
    url.pathname = `/${name}`
    stores.env.DATABASE_URL = url.toString()
    stores.database = `PostgreSQL ${version} (fresh database ${name})`
    stores.real.postgres = true
  }
  if (redisUrl) {
    const prefix = `bench:${runId}:`
    const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 })
    await redis.connect()
    const info = await redis.info('server')
    const version = /redis_version:(\S+)/.exec(info)?.[1] ?? '?'
    cleanup.add(`delete Redis keys ${prefix}*`, async () => {
      await deleteKeys(redis, prefix)
      redis.disconnect()
    })
    stores.env.REDIS_URL = redisUrl
    stores.env.REDIS_KEY_PREFIX = prefix
    stores.admission = `Redis ${version} (key prefix ${prefix})`
    stores.real.redis = true
  }
  return stores
}

async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0'
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
    if (keys.length > 0) await redis.unlink(...keys)
    cursor = next
  } while (cursor !== '0')
}
