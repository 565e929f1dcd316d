/**
 * Whether this process should get traffic: Postgres answers `select 1`, the admission store answers a
 * ping, each within a short bound, and the process is not draining for shutdown. A load balancer polls
 * it through GET /readyz on either server.
 */
import type { Sql } from 'postgres'
import type { AdmissionStore } from '../stores/admission/store.ts'

/** A probe answers well within a load balancer's usual check timeout (2–5 s). */
const CHECK_TIMEOUT_MS = 1_000

export type ReadinessDeps = {
  sql: Sql
  store: AdmissionStore
  /** True once shutdown began: the process finishes what it has and takes nothing new. */
  draining: () => boolean
}

/** `ok`, or `error: <why>` for each store. */
export type Readiness = { ready: boolean; checks: Record<string, string> }

export async function checkReadiness(
  deps: ReadinessDeps,
  timeoutMs = CHECK_TIMEOUT_MS,
): Promise<Readiness> {
  const [postgres, admission] = await Promise.all([
    probe(async () => void (await deps.sql`select 1`), timeoutMs),
    probe(() => deps.store.ping(), timeoutMs),
  ])
  const checks: Record<string, string> = { postgres, admission }
  if (deps.draining()) checks.shutdown = 'draining'
  return { ready: postgres === 'ok' && admission === 'ok' && !deps.draining(), checks }
}

async function probe(check: () => Promise<void>, timeoutMs: number): Promise<string> {
  let timer: Timer | undefined
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`error: no answer within ${timeoutMs} ms`), timeoutMs)
  })
  const answer = check().then(
    () => 'ok',
    (error: unknown) => `error: ${reason(error).slice(0, 200)}`,
  )
  try {
    return await Promise.race([answer, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/** Why a store did not answer, in words an operator reads; the Redis client's own for a lost connection. */
function reason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  // ioredis, with its offline queue off, while it reconnects; or a command written just before the
  // connection's end was seen, which it gives up on once the connection is lost (no retries).
  if (
    /Stream isn't writeable|Connection is closed|max retries per request|ECONNRESET|EPIPE/.test(
      message,
    )
  )
    return 'not connected to Redis (reconnecting; check that it is running and REDIS_URL)'
  return message
}
