/**
 * The Postgres connection. With DATABASE_URL set, a pool to that server; without it, the embedded
 * database: PGlite (Postgres compiled to WASM) with its files under DATA_DIR, served on a loopback
 * port by pglite-socket so that the same `postgres` client and the same SQL run in both cases.
 */
import postgres, { type Sql } from 'postgres'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'

export type Database = {
  sql: Sql
  kind: 'postgres' | 'embedded'
  /** Where it is, for the boot log (no password). */
  location: string
  close(): Promise<void>
}

/** bigint columns (money, counters) come back as JavaScript numbers; amounts stay below 2^53. */
const bigintAsNumber = {
  to: 20,
  from: [20],
  serialize: (value: number | bigint) => String(value),
  parse: (value: string) => {
    const parsed = Number(value)
    if (!Number.isSafeInteger(parsed)) throw new RangeError(`bigint ${value} is outside the safe integer range`)
    return parsed
  },
}

export function connectPostgres(url: string, max: number): Database {
  const sql = postgres(url, { max, onnotice: () => {}, types: { bigint: bigintAsNumber } })
  return { sql, kind: 'postgres', location: redactUrl(url), close: () => sql.end({ timeout: 5 }) }
}

/** Starts the embedded database under `dataDir` (or in memory when dataDir is "memory://"). */
export async function startEmbedded(dataDir: string): Promise<Database> {
  const { PGlite } = await import('@electric-sql/pglite')
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket')
  let path = 'memory://'
  if (dataDir !== 'memory://') {
    path = join(dataDir, 'pgdata')
    await mkdir(path, { recursive: true })
  }
  const db = await PGlite.create(path)
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 4 })
  await server.start()
  // PGlite runs one query at a time; one client connection keeps transactions from interleaving.
  const sql = postgres(`postgres://postgres@${server.getServerConn()}/postgres`, {
    max: 1,
    onnotice: () => {},
    types: { bigint: bigintAsNumber },
  })
  return {
    sql,
    kind: 'embedded',
    location: path,
    async close() {
      await sql.end({ timeout: 5 })
      await server.stop()
      await db.close()
    },
  }
}

function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return 'postgres'
  }
}
