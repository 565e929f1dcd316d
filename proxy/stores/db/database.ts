/**
 * The Postgres connection. With DATABASE_URL set, a pool to that server; without it, the embedded
 * database: PGlite (Postgres compiled to WASM) with its files under DATA_DIR, in its own thread, served
 * on a loopback port by pglite-socket so that the same `postgres` client and the same SQL run in both cases.
 */
import postgres, { type Sql } from 'postgres'
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ConfigError } from '../../core/config.ts'
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
  let lock: EmbeddedLock | undefined
  if (dataDir !== 'memory://') {
    path = join(dataDir, 'pgdata')
    await mkdir(path, { recursive: true })
    lock = await claimEmbedded(dataDir)
  }
  try {
    return await openEmbedded(path, lock)
  } catch (error) {
    await lock?.release()
    throw error
  }
}

async function openEmbedded(path: string, lock: EmbeddedLock | undefined): Promise<Database> {
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
  await lock?.serving(address!)
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
      await lock?.release()
    },
  }
}

type EmbeddedLock = { serving(address: string): Promise<void>; release(): Promise<void> }

/** Longest a claim may go without its address while its process starts the database. */
const STARTING_MS = 60_000

/**
 * Claims the embedded database under `dataDir` for this process: PGlite belongs to one process, and a
 * second gateway started on the same DATA_DIR (on other ports) would write the same files with its own
 * balances. The claim is a file holding the process ID and, once it serves, the database's loopback
 * address; a claim whose address no longer answers (or, before it serves, whose process is gone or
 * that is older than any start) was left by a process that stopped without releasing it, and is taken
 * over.
 */
async function claimEmbedded(dataDir: string): Promise<EmbeddedLock> {
  const file = join(dataDir, 'embedded.lock')
  const write = (address = '') => writeFile(file, `${process.pid} ${address}`.trim())
  for (let attempt = 0; ; attempt++) {
    try {
      await writeFile(file, String(process.pid), { flag: 'wx' })
      break
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST' || attempt > 0) throw error
      const [pid, address] = (await readFile(file, 'utf8').catch(() => '')).trim().split(/\s+/)
      const holder = Number(pid)
      const age = Date.now() - ((await stat(file).catch(() => undefined))?.mtimeMs ?? 0)
      const held = address
        ? await answers(address)
        : holder > 0 && holder !== process.pid && alive(holder) && age < STARTING_MS
      if (held)
        throw new ConfigError(
          `DATA_DIR (${dataDir}) is in use by another gateway (process ${holder}): its embedded database belongs to one process. Stop that one first, or give this one another DATA_DIR (or DATABASE_URL). If no gateway runs there, delete ${file}.`,
        )
      await rm(file, { force: true })
    }
  }
  return { serving: (address) => write(address), release: () => rm(file, { force: true }) }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM'
  }
}

/** Whether something accepts a connection at host:port within a second. */
async function answers(address: string): Promise<boolean> {
  const at = address.lastIndexOf(':')
  const hostname = address.slice(0, at)
  const port = Number(address.slice(at + 1))
  if (!hostname || !(port > 0)) return false
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), 1_000)
    Bun.connect({
      hostname,
      port,
      socket: {
        open(socket) {
          clearTimeout(timer)
          socket.end()
          resolve(true)
        },
        data() {},
        connectError() {
          clearTimeout(timer)
          resolve(false)
        },
      },
    }).catch(() => {
      clearTimeout(timer)
      resolve(false)
    })
  })
}
