/**
 * The Postgres connection. With DATABASE_URL set, a pool to that server; without it, the embedded
 * database: PGlite (Postgres compiled to WASM) with its files under DATA_DIR, in its own thread, served
 * on a loopback port by pglite-socket so that the same `postgres` client and the same SQL run in both cases.
 */
import postgres, { type Sql } from 'postgres'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { redactUrl } from '../../core/log.ts'

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
    if (!Number.isSafeInteger(parsed))
      throw new RangeError(`bigint ${value} is outside the safe integer range`)
    return parsed
  },
}

export function connectPostgres(url: string, max: number): Database {
  const sql = postgres(url, { max, onnotice: () => {}, types: { bigint: bigintAsNumber } })
  return {
    sql,
    kind: 'postgres',
    location: redactUrl(url, 'postgres'),
    close: () => sql.end({ timeout: 5 }),
  }
}

/**
 * Starts the embedded database under `dataDir` (or in memory when dataDir is "memory://"). PGlite runs in
 * a worker thread (embedded-worker.ts); this thread reaches it over a loopback socket.
 */
export async function startEmbedded(dataDir: string): Promise<Database> {
  let path = 'memory://'
  if (dataDir !== 'memory://') {
    path = join(dataDir, 'pgdata')
    await mkdir(path, { recursive: true })
  }
  const worker = new Worker(new URL('./embedded-worker.ts', import.meta.url).href)
  const ask = (message: object, expected: string) =>
    new Promise<{ address?: string }>((resolve, reject) => {
      worker.onmessage = (
        event: MessageEvent<{ type: string; address?: string; message?: string }>,
      ) => {
        if (event.data.type === expected) resolve(event.data)
        else reject(new Error(`Embedded database: ${event.data.message ?? event.data.type}`))
      }
      worker.onerror = (event) => reject(new Error(`Embedded database: ${event.message}`))
      worker.postMessage(message)
    })
  const { address } = await ask({ type: 'start', path }, 'started')
  // PGlite runs one query at a time; one client connection keeps transactions from interleaving.
  const sql = postgres(`postgres://postgres@${address}/postgres`, {
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
      await ask({ type: 'stop' }, 'stopped')
      worker.terminate()
    },
  }
}
