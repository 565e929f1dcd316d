/**
 * Access to the real services the tests use. DATABASE_URL and REDIS_URL name them; without them the
 * service-backed suites are skipped, unless REQUIRE_SERVICES=1 (set by CI), which turns a missing
 * service into a failing test.
 */
import { describe, test } from 'bun:test'
import Redis from 'ioredis'
import postgres from 'postgres'
import { connectPostgres, type Database } from '../../proxy/stores/db/database.ts'
import { migrate } from '../../sql/migrate.ts'

export const databaseUrl = process.env.DATABASE_URL || undefined
export const redisUrl = process.env.REDIS_URL || undefined
const required = process.env.REQUIRE_SERVICES === '1'

type Service = 'postgres' | 'redis'

/** describe() that needs services: skipped when one is absent, failing when absent and required. */
export function describeWith(services: Service | Service[], name: string, body: () => void): void {
  const missing = [services]
    .flat()
    .filter((service) => !(service === 'postgres' ? databaseUrl : redisUrl))
  if (missing.length === 0) return describe(name, body)
  const variables = missing
    .map((service) => (service === 'postgres' ? 'DATABASE_URL' : 'REDIS_URL'))
    .join(' and ')
  if (required) {
    describe(name, () => {
      test(`${variables} set`, () => {
        throw new Error(`${variables} not set and REQUIRE_SERVICES=1: this suite cannot run`)
      })
    })
    return
  }
  describe.skip(`${name} (set ${variables} to run)`, body)
}

export function uniqueName(prefix: string): string {
  return `${prefix}${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`
}

/** A fresh, migrated database on the test server; dropped by the returned close(). */
export async function createTestDatabase(): Promise<Database> {
  const name = uniqueName('gw_test_')
  const admin = postgres(databaseUrl!, { max: 1, onnotice: () => {} })
  await admin.unsafe(`CREATE DATABASE ${name}`)
  const url = new URL(databaseUrl!)
  url.pathname = `/${name}`
  const db = connectPostgres(url.toString(), 8)
  await migrate(db.sql)
  return {
    ...db,
    location: url.toString(),
    async close() {
      await db.close()
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await admin.end()
    },
  }
}

/** Deletes every key under a test's Redis prefix. */
export async function deleteRedisKeys(prefix: string): Promise<void> {
  const redis = new Redis(redisUrl!)
  let cursor = '0'
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
    if (keys.length > 0) await redis.del(...keys)
    cursor = next
  } while (cursor !== '0')
  await redis.quit()
}
