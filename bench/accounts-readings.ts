/**
 * Readings of `bun run bench:accounts`: what the gateway process, Redis and PostgreSQL hold at one
 * moment, and what the gateway has answered so far. The gateway's resident memory and CPU time come
 * from /proc; its JS heap, open holds and answered requests (by style and status) from its
 * /metrics; Redis's keys from SCAN over the run's key prefix (grouped by kind) and DBSIZE of the
 * run's database; PostgreSQL's rows from exact counts.
 */
import { machineCpu, processMemory } from './proc.ts'
import type Redis from 'ioredis'
import type { Sql } from 'postgres'

export type RedisKeys = {
  /** DBSIZE of the run's database (every key in it, whoever wrote it). */
  dbsize: number
  /** Keys under the run's prefix by kind (`state`, `holds`, `outbox`, `credits`, `admission`, …). */
  byKind: Record<string, number>
  total: number
  /** Up to five keys of no known kind, for the report. */
  unknown: string[]
  /** Fields of the `holds` hashes: leases (`lease:…`) and holds of single requests. */
  leases: number
  requestHolds: number
  /** Accounts with a hold of a single request open. */
  accountsWithRequestHolds: string[]
  /** Sum of MEMORY USAGE over the run's keys, when asked for. */
  bytes?: number
  /** used_memory of the whole Redis server. */
  usedMemory: number
}

export type Reading = {
  label: string
  /** Seconds since the load started (negative before it). */
  atS: number
  atMs: number
  gateway: {
    rssKb: number
    peakRssKb: number
    /** User + system CPU seconds since the process started. */
    cpuS: number
    heapUsedBytes: number
    openHolds: number
    inflight: number
  }
  /** Requests the gateway answered since it started, by `style status`. */
  answered: Record<string, number>
  redis: RedisKeys
  postgres: { ledger: number; requestLogs: number; storedResponses: number }
  /** Machine-wide CPU counters, for how busy the machine was between two readings. */
  cpu: { busy: number; total: number }
}

/** The kind of a Redis key of the service, by its name after the prefix. */
export function keyKind(name: string): string | undefined {
  const account = /^\{a:[^}]+\}:([a-z-]+)$/.exec(name)
  if (account) return account[1]
  if (name.startsWith('admission:')) return 'admission'
  if (name.startsWith('address:')) return 'address'
  return undefined
}

/** Keys under `prefix` by kind, DBSIZE and used_memory; with `bytes`, MEMORY USAGE summed too. */
export async function redisKeys(redis: Redis, prefix: string, bytes: boolean): Promise<RedisKeys> {
  const byKind: Record<string, number> = {}
  const unknown: string[] = []
  const names: string[] = []
  const holds: string[] = []
  let cursor = '0'
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 2000)
    for (const name of found) {
      const kind = keyKind(name.slice(prefix.length))
      byKind[kind ?? 'other'] = (byKind[kind ?? 'other'] ?? 0) + 1
      if (!kind && unknown.length < 5) unknown.push(name.slice(prefix.length))
      if (bytes) names.push(name)
      if (kind === 'holds') holds.push(name)
    }
    cursor = next
  } while (cursor !== '0')
  let total = 0
  for (const count of Object.values(byKind)) total += count
  let leases = 0
  let requestHolds = 0
  const accountsWithRequestHolds: string[] = []
  if (holds.length > 0) {
    const pipeline = redis.pipeline()
    for (const name of holds) pipeline.hkeys(name)
    const replies = (await pipeline.exec()) ?? []
    replies.forEach(([error, fields], index) => {
      if (error) return
      const ids = fields as string[]
      const single = ids.filter((id) => !id.startsWith('lease:')).length
      leases += ids.length - single
      requestHolds += single
      const account = /\{a:([^}]+)\}/.exec(holds[index]!)?.[1]
      if (single > 0 && account) accountsWithRequestHolds.push(account)
    })
  }
  let sum: number | undefined
  if (bytes) {
    sum = 0
    for (let start = 0; start < names.length; start += 1000) {
      const pipeline = redis.pipeline()
      for (const name of names.slice(start, start + 1000)) pipeline.memory('USAGE', name)
      for (const [error, value] of (await pipeline.exec()) ?? [])
        if (!error) sum += Number(value ?? 0)
    }
  }
  const info = await redis.info('memory')
  return {
    dbsize: await redis.dbsize(),
    byKind,
    total,
    unknown,
    leases,
    requestHolds,
    accountsWithRequestHolds,
    bytes: sum,
    usedMemory: Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? 0),
  }
}

/** Sample values of a Prometheus text exposition: name → [labels, value]. */
export function parseMetrics(
  text: string,
): Map<string, { labels: Record<string, string>; value: number }[]> {
  const series = new Map<string, { labels: Record<string, string>; value: number }[]>()
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line)
    if (!match) continue
    const labels: Record<string, string> = {}
    for (const [, name, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      labels[name!] = value!
    const list = series.get(match[1]!) ?? []
    list.push({ labels, value: Number(match[3]) })
    series.set(match[1]!, list)
  }
  return series
}

async function gatewayMetrics(siteUrl: string) {
  const response = await fetch(`${siteUrl}/metrics`)
  const series = parseMetrics(await response.text())
  const one = (name: string) => series.get(name)?.[0]?.value ?? 0
  const answered: Record<string, number> = {}
  for (const { labels, value } of series.get('gateway_requests_total') ?? []) {
    const key = `${labels.style} ${labels.status}`
    answered[key] = (answered[key] ?? 0) + value
  }
  return {
    answered,
    heapUsedBytes: one('nodejs_heap_size_used_bytes'),
    openHolds: one('gateway_open_holds'),
    inflight: one('gateway_inflight_requests'),
  }
}

async function rowCounts(sql: Sql): Promise<Reading['postgres']> {
  const [row] = await sql<{ ledger: number; logs: number; stored: number }[]>`
    SELECT (SELECT count(*) FROM ledger)::int AS ledger,
           (SELECT count(*) FROM request_logs)::int AS logs,
           (SELECT count(*) FROM stored_responses)::int AS stored`
  return { ledger: row!.ledger, requestLogs: row!.logs, storedResponses: row!.stored }
}

export type Sources = {
  gatewayPid: number
  siteUrl: string
  redis: Redis
  redisPrefix: string
  sql: Sql
}

/** One reading of everything; `bytes` also sums Redis's MEMORY USAGE over the run's keys. */
export async function takeReading(
  sources: Sources,
  label: string,
  loadStartedMs: number | undefined,
  bytes = false,
): Promise<Reading> {
  const atMs = Date.now()
  const [memory, metrics, redis, postgres, cpu] = await Promise.all([
    processMemory(sources.gatewayPid),
    gatewayMetrics(sources.siteUrl),
    redisKeys(sources.redis, sources.redisPrefix, bytes),
    rowCounts(sources.sql),
    machineCpu().then((cpu) => {
      if (!cpu) throw new Error('/proc/stat cannot be read')
      return cpu
    }),
  ])
  return {
    label,
    atS: loadStartedMs === undefined ? 0 : (atMs - loadStartedMs) / 1000,
    atMs,
    gateway: {
      ...memory,
      heapUsedBytes: metrics.heapUsedBytes,
      openHolds: metrics.openHolds,
      inflight: metrics.inflight,
    },
    answered: metrics.answered,
    redis,
    postgres,
    cpu,
  }
}

/** Requests the gateway answered in a reading (every style and status). */
export function answeredTotal(reading: Reading): number {
  let total = 0
  for (const count of Object.values(reading.answered)) total += count
  return total
}
