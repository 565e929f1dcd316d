/**
 * Claims a PostgreSQL database for the admission store a gateway runs with. Without REDIS_URL the live
 * balances, holds and limits are in the process's own memory: a second gateway on the same database
 * (another host, or one started with Redis beside it) would admit against balances of its own and spend
 * the same credit twice. So the in-process store claims the database alone and Redis-backed gateways
 * share their claim: a session advisory lock, on a connection of its own kept for the life of the
 * process (a process that dies, even by SIGKILL, loses its connection and with it the claim).
 */
import postgres, { type Sql } from 'postgres'
import { ConfigError } from '../../core/config.ts'

/** The advisory lock's two keys (any pair no other lock of this database uses). */
const LOCK = [0x67617465, 1] as const

export type StoreClaim = { release(): Promise<void> }

/** Claims the database at `url` for `store`; refuses, naming the settings, when the claims conflict. */
export async function claimForStore(
  url: string,
  where: string,
  store: 'memory' | 'redis',
): Promise<StoreClaim> {
  // No lifetime: the pool's default would end the connection, and the claim, after half an hour.
  const sql: Sql = postgres(url, { max: 1, max_lifetime: 0, onnotice: () => {} })
  try {
    const [row] =
      store === 'memory'
        ? await sql`SELECT pg_try_advisory_lock(${LOCK[0]}, ${LOCK[1]}) AS claimed`
        : await sql`SELECT pg_try_advisory_lock_shared(${LOCK[0]}, ${LOCK[1]}) AS claimed`
    if (!row?.claimed)
      throw new ConfigError(
        store === 'memory'
          ? `DATABASE_URL (${where}) is in use by another gateway, and without REDIS_URL this one would keep the balances in its own memory: a second gateway would spend the same credit twice. Set the same REDIS_URL (and REDIS_KEY_PREFIX) on every gateway of this database, or stop the other one first.`
          : `DATABASE_URL (${where}) is in use by a gateway without REDIS_URL, which keeps the balances in its own memory: stop it (or start it again with this REDIS_URL) before starting others on this database.`,
      )
  } catch (error) {
    await sql.end({ timeout: 5 })
    throw error
  }
  return { release: () => sql.end({ timeout: 5 }) }
}
