/**
 * Upstream health as routing sees it: a circuit breaker per route (provider and upstream model), and the
 * providers an operator paused. Both are read in memory on every request.
 *
 * Breaker: after `failures` consecutive failed attempts (connection failure, 5xx, timeout; a 429 is the
 * provider's rate limit, not ill health) the route is open and skipped for `openMs`. Then it is
 * half-open: one request at a time may try it; any answer of the provider closes it (a refusal of the
 * request or a rate limit too: the provider is reachable), a failure opens it again. The state
 * is per process: each process learns health from its own traffic, which needs no coordination and
 * converges as fast as the traffic does.
 *
 * Pauses live in Postgres (provider_pauses) and are read again every few seconds; the process that
 * changes one applies it at once.
 */
import type { Sql } from 'postgres'
import type { Route } from '../core/catalog/catalog-types.ts'
import { log } from '../core/log.ts'
import type { BreakerState } from '../core/metrics.ts'

export const CLOSED: BreakerState = 0
export const HALF_OPEN: BreakerState = 1
export const OPEN: BreakerState = 2

type Breaker = {
  provider: string
  model: string
  failures: number
  openUntilMs: number
  probingSinceMs: number
}

export type RouteBlock = { reason: 'paused' | 'open'; untilMs: number }

export type HealthOptions = { failures: number; openMs: number }

export class RouteHealth {
  private readonly breakers = new Map<string, Breaker>()
  private pauses = new Map<string, number>()

  constructor(private readonly options: HealthOptions) {}

  /** Why the route cannot take a request now, or undefined when it can. */
  blocked(route: Route, nowMs: number): RouteBlock | undefined {
    const pausedUntil = this.pauses.get(route.provider.id)
    if (pausedUntil !== undefined && pausedUntil > nowMs)
      return { reason: 'paused', untilMs: pausedUntil }
    const breaker = this.breakers.get(routeKey(route))
    if (!breaker || breaker.openUntilMs === 0) return undefined
    if (nowMs < breaker.openUntilMs) return { reason: 'open', untilMs: breaker.openUntilMs }
    // Half-open while another request probes it (bounded, so a probe that never reports does not keep
    // the route closed for good).
    if (breaker.probingSinceMs > 0 && nowMs < breaker.probingSinceMs + this.options.openMs) {
      return { reason: 'open', untilMs: breaker.probingSinceMs + this.options.openMs }
    }
    return undefined
  }

  /** Called just before an attempt: false when the route is half-open and another request probes it. */
  begin(route: Route, nowMs: number): boolean {
    if (this.blocked(route, nowMs)) return false
    const breaker = this.breakers.get(routeKey(route))
    if (breaker && breaker.openUntilMs !== 0) breaker.probingSinceMs = nowMs
    return true
  }

  /** The provider answered (an answer, a refusal of the request, its rate limit): the route is closed. */
  succeeded(route: Route): void {
    const breaker = this.breakers.get(routeKey(route))
    if (!breaker || (breaker.failures === 0 && breaker.openUntilMs === 0)) return
    if (breaker.openUntilMs !== 0)
      log.info('route recovered', { provider: breaker.provider, model: breaker.model })
    Object.assign(breaker, { failures: 0, openUntilMs: 0, probingSinceMs: 0 })
  }

  /** An attempt that ended without a verdict (its client went away): another request may probe. */
  abandoned(route: Route): void {
    const breaker = this.breakers.get(routeKey(route))
    if (breaker) breaker.probingSinceMs = 0
  }

  failed(route: Route, nowMs: number): void {
    const key = routeKey(route)
    let breaker = this.breakers.get(key)
    if (!breaker) {
      breaker = {
        provider: route.provider.id,
        model: route.upstreamModel,
        failures: 0,
        openUntilMs: 0,
        probingSinceMs: 0,
      }
      this.breakers.set(key, breaker)
    }
    breaker.failures += 1
    if (breaker.probingSinceMs > 0 || breaker.failures >= this.options.failures) {
      if (breaker.openUntilMs === 0)
        log.warn('route failing; skipped for a while', {
          provider: breaker.provider,
          model: breaker.model,
          failures: breaker.failures,
        })
      breaker.openUntilMs = nowMs + this.options.openMs
      breaker.probingSinceMs = 0
    }
  }

  /** Breaker states for the metrics. */
  *states(nowMs = Date.now()): Iterable<{ provider: string; model: string; state: BreakerState }> {
    for (const breaker of this.breakers.values()) {
      const state =
        breaker.openUntilMs === 0 ? CLOSED : nowMs < breaker.openUntilMs ? OPEN : HALF_OPEN
      yield { provider: breaker.provider, model: breaker.model, state }
    }
  }

  setPauses(pauses: Map<string, number>): void {
    this.pauses = pauses
  }

  /** Reads the operator's pauses from Postgres. */
  async refreshPauses(sql: Sql): Promise<void> {
    const rows = await sql<{ provider_id: string; paused_until: Date }[]>`
      SELECT provider_id, paused_until FROM provider_pauses WHERE paused_until > now()`
    this.setPauses(new Map(rows.map((row) => [row.provider_id, row.paused_until.getTime()])))
  }
}

function routeKey(route: Route): string {
  return `${route.provider.id}\n${route.upstreamModel}`
}
