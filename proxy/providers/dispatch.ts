/**
 * Stage 8: dispatch. Tries the candidates' routes in order until one starts a response; the next one is
 * tried only when the previous failed before anything reached the client (connection failure, upstream
 * 429 or 5xx, or a timeout before the first byte). A non-streaming answer is read whole here, so a body
 * that breaks half-way still allows a fallback; a stream is handed over once its first bytes arrived.
 */
import { ServiceError } from '../../shared/errors.ts'
import type { Route } from '../catalog/catalog.ts'
import type { Candidate } from '../gateway/call.ts'
import { log } from '../log/log.ts'
import { adapters } from './adapters.ts'
import { failureFromNetwork, type UpstreamFailure } from './upstream-failure.ts'

export type UpstreamRequest = { url: string; init: RequestInit }

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
}

export type Served = {
  candidate: Candidate
  route: Route
  /** Aborts the upstream request (client gone, stream stopped). */
  controller: AbortController
  /** Non-streaming: the whole body. */
  body?: string
  /** Streaming: the first bytes and the reader for the rest. */
  first?: Uint8Array
  reader?: ReadableStreamDefaultReader<Uint8Array>
  attempts: number
}

export type DispatchResult =
  | { ok: true; served: Served }
  | { ok: false; error: ServiceError; attempts: number; clientGone: boolean }

export async function dispatch(candidates: Candidate[], options: DispatchOptions): Promise<DispatchResult> {
  let attempts = 0
  let last: UpstreamFailure | undefined
  for (const candidate of candidates) {
    for (const route of candidate.routes) {
      if (!route.provider.apiKey) continue
      if (Date.now() >= options.deadlineMs) return timedOut(options, attempts)
      attempts += 1
      const controller = new AbortController()
      const outcome = await attempt(route, controller, options)
      if ('served' in outcome) return { ok: true, served: { candidate, route, controller, attempts, ...outcome.served } }
      controller.abort()
      if (options.clientSignal.aborted) {
        return { ok: false, error: new ServiceError('upstream_error', 'The client closed the connection.'), attempts, clientGone: true }
      }
      if (outcome.timedOut) return timedOut(options, attempts)
      log.info('upstream attempt failed', { requestId: options.requestId, provider: route.provider.id, code: outcome.failure.error.code })
      last = outcome.failure
      if (!outcome.failure.fallback) return { ok: false, error: outcome.failure.error, attempts, clientGone: false }
    }
  }
  if (last) return { ok: false, error: last.error, attempts, clientGone: false }
  const names = candidates.map((candidate) => candidate.model.id).join(', ')
  return {
    ok: false,
    error: new ServiceError('no_available_route', `No provider route is available for ${names}: no configured provider serves it.`),
    attempts,
    clientGone: false,
  }
}

type AttemptOutcome =
  | { served: Pick<Served, 'body' | 'first' | 'reader'> }
  | { failure: UpstreamFailure; timedOut: boolean }

async function attempt(route: Route, controller: AbortController, options: DispatchOptions): Promise<AttemptOutcome> {
  const built = options.build(route)
  if (built instanceof ServiceError) return { failure: { error: built, fallback: false }, timedOut: false }
  const { url, init } = built
  const timer = setTimeout(() => controller.abort(), Math.max(0, options.deadlineMs - Date.now()))
  const signal = AbortSignal.any([controller.signal, options.clientSignal])
  const timedOut = () => Date.now() >= options.deadlineMs - 5
  try {
    const response = await fetch(url, { ...init, signal })
    if (response.status >= 400) {
      return { failure: adapters[route.provider.style].failure(route.provider.id, response.status, await response.text()), timedOut: false }
    }
    if (!options.stream) return { served: { body: await response.text() } }
    const reader = response.body!.getReader()
    const first = await reader.read()
    if (first.done || !first.value) {
      return { failure: failureFromNetwork(route.provider.id, new Error('the stream ended before any data')), timedOut: false }
    }
    return { served: { first: first.value, reader } }
  } catch (error) {
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
