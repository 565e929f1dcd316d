/**
 * Stage 8: dispatch. Tries the candidates' routes in order until one starts a response; the next one is
 * tried only when the previous failed before anything reached the client (connection failure, upstream
 * 429 or 5xx, or a timeout before the first byte). A non-streaming answer is read whole here, so a body
 * that breaks half-way still allows a fallback; a stream is handed over once its first event arrived
 * (one that is an error is a failure before the response started: the next route may answer).
 * A streamed attempt that sends nothing within the attempt's first-byte time gives way to the next route.
 * Every outcome is reported to the route's breaker.
 */
import { ServiceError } from '../../shared/errors.ts'
import type { Route } from '../core/catalog/catalog-types.ts'
import type { Candidate } from '../core/call.ts'
import { log } from '../core/log.ts'
import { recordUpstreamError } from '../core/metrics.ts'
import type { UpstreamRequest } from './adapter.ts'
import type { RouteHealth } from './route-health.ts'
import { adapters } from './adapters.ts'
import { echoFetch } from './echo/echo-provider.ts'
import {
  failureFromNetwork,
  invalidResponse,
  withProviderWait,
  type UpstreamFailure,
} from './upstream-failure.ts'
import { readStreamStart, type StreamHead } from './stream-start.ts'

/** Providers answered in the process, by the catalog's `builtin` name. */
const builtinProviders = { echo: echoFetch }

export type DispatchOptions = {
  requestId: string
  stream: boolean
  /** The request for a route, or why the request cannot be sent there (not translatable). */
  build: (route: Route) => UpstreamRequest | ServiceError
  /** Aborts when the client goes away. */
  clientSignal: AbortSignal
  /** Epoch ms by which a complete answer (or, streaming, the first bytes) must have arrived. */
  deadlineMs: number
  timeoutSeconds: number
  /** Streaming: how long one attempt may wait for its first bytes before the next route is tried. */
  attemptFirstByteMs?: number
  health?: RouteHealth
}

export type Served = {
  candidate: Candidate
  route: Route
  /** Aborts the upstream request (client gone, stream stopped). */
  controller: AbortController
  /** Non-streaming: the whole body. */
  body?: string
  /** Streaming: the events read up to the first, and the reader for the rest. */
  head?: StreamHead
  reader?: ReadableStreamDefaultReader<Uint8Array>
  attempts: number
}

export type DispatchResult =
  | { ok: true; served: Served }
  | { ok: false; error: ServiceError; attempts: number; clientGone: boolean }

export async function dispatch(
  candidates: Candidate[],
  options: DispatchOptions,
): Promise<DispatchResult> {
  let attempts = 0
  let last: UpstreamFailure | undefined
  let skipped = 0
  const tries = candidates.flatMap((candidate) =>
    candidate.routes
      .filter((route) => route.provider.available)
      .map((route) => ({ candidate, route })),
  )
  for (const [index, { candidate, route }] of tries.entries()) {
    if (Date.now() >= options.deadlineMs) return timedOut(options, attempts)
    if (options.health && !options.health.begin(route, Date.now())) {
      skipped += 1
      continue
    }
    attempts += 1
    const controller = new AbortController()
    const outcome = await attempt(route, controller, options, index < tries.length - 1)
    if ('served' in outcome) {
      options.health?.succeeded(route)
      return { ok: true, served: { candidate, route, controller, attempts, ...outcome.served } }
    }
    controller.abort()
    if (options.clientSignal.aborted) {
      options.health?.abandoned(route)
      return {
        ok: false,
        error: new ServiceError('upstream_error', 'The client closed the connection.'),
        attempts,
        clientGone: true,
      }
    }
    // A rate limit or a refusal of the request is the provider's answer, not ill health: it is reachable.
    if (outcome.failure.fallback && outcome.failure.error.code !== 'upstream_rate_limited')
      options.health?.failed(route, Date.now())
    else options.health?.succeeded(route)
    recordUpstreamError(
      route.provider.id,
      outcome.timedOut ? 'request_timeout' : outcome.failure.error.code,
    )
    if (outcome.timedOut) return timedOut(options, attempts)
    log.info('upstream attempt failed', {
      requestId: options.requestId,
      provider: route.provider.id,
      code: outcome.failure.error.code,
    })
    last = outcome.failure
    if (!outcome.failure.fallback)
      return { ok: false, error: outcome.failure.error, attempts, clientGone: false }
  }
  if (last) return { ok: false, error: last.error, attempts, clientGone: false }
  const names = candidates.map((candidate) => candidate.model.id).join(', ')
  if (skipped > 0) {
    // Every route is half-open with a probe under way: its outcome decides; until then the route waits.
    return {
      ok: false,
      error: new ServiceError(
        'model_unavailable',
        `The providers of ${names} are failing right now. Retry shortly or choose another allowed model.`,
      ),
      attempts,
      clientGone: false,
    }
  }
  return {
    ok: false,
    error: new ServiceError(
      'no_available_route',
      `No provider route is available for ${names}: no configured provider serves it.`,
    ),
    attempts,
    clientGone: false,
  }
}

type AttemptOutcome =
  | { served: Pick<Served, 'body' | 'head' | 'reader'> }
  | { failure: UpstreamFailure; timedOut: boolean }

/** One upstream request; `more`: another route is left, so a stream slow to start gives way to it. */
async function attempt(
  route: Route,
  controller: AbortController,
  options: DispatchOptions,
  more: boolean,
): Promise<AttemptOutcome> {
  const built = options.build(route)
  if (built instanceof ServiceError)
    return { failure: { error: built, fallback: false }, timedOut: false }
  const { url, init } = built
  const startedAt = Date.now()
  const attemptDeadline =
    more && options.stream && options.attemptFirstByteMs
      ? Math.min(options.deadlineMs, startedAt + options.attemptFirstByteMs)
      : options.deadlineMs
  const timer = setTimeout(() => controller.abort(), Math.max(0, attemptDeadline - startedAt))
  const signal = AbortSignal.any([controller.signal, options.clientSignal])
  const timedOut = () => Date.now() >= options.deadlineMs - 5
  const attemptTimedOut = () => Date.now() >= attemptDeadline - 5
  try {
    const response = await (route.provider.builtin
      ? builtinProviders[route.provider.builtin]
      : fetch)(url, { ...init, signal })
    if (response.status >= 400) {
      const failure = adapters[route.provider.style].failure(
        route.provider.id,
        response.status,
        await response.text(),
      )
      return {
        // A provider that asks for a wait (rate-limited, overloaded, unavailable) has it passed on.
        failure:
          response.status === 429 || response.status >= 500
            ? withProviderWait(failure, response.headers)
            : failure,
        timedOut: false,
      }
    }
    if (!options.stream) return { served: { body: await response.text() } }
    const type = response.headers.get('content-type')
    if (type && !type.startsWith('text/event-stream')) {
      // Not a stream (an HTML error page, a JSON body): nothing has reached the client, so another
      // route may still answer.
      await response.body?.cancel().catch(() => undefined)
      return {
        failure: invalidResponse(`a stream was asked for and the answer is ${type.split(';')[0]}`),
        timedOut: false,
      }
    }
    const reader = response.body!.getReader()
    const start = await readStreamStart(route, reader)
    if ('failure' in start) {
      await reader.cancel().catch(() => undefined)
      return { failure: start.failure, timedOut: false }
    }
    return { served: { head: start.head, reader } }
  } catch (error) {
    if (!timedOut() && attemptTimedOut() && !options.clientSignal.aborted) {
      const seconds = Math.round((attemptDeadline - startedAt) / 1000)
      return {
        failure: failureFromNetwork(
          route.provider.id,
          new Error(`no response started within ${seconds} s`),
        ),
        timedOut: false,
      }
    }
    return { failure: failureFromNetwork(route.provider.id, error), timedOut: timedOut() }
  } finally {
    clearTimeout(timer)
  }
}

function timedOut(options: DispatchOptions, attempts: number): DispatchResult {
  const what = options.stream ? 'No response started' : 'No complete response'
  return {
    ok: false,
    error: new ServiceError(
      'request_timeout',
      `${what} within ${options.timeoutSeconds} seconds (${attempts} upstream attempt${attempts === 1 ? '' : 's'}). ` +
        'Use streaming and a realistic output limit. The request may still have run upstream.',
    ),
    attempts,
    clientGone: false,
  }
}
