/**
 * The process's Prometheus metrics: one registry, the gateway's own series and prom-client's default
 * process metrics. With WORKERS above 1 a scrape of any process answers the sum over all of them
 * (ops/worker-metrics.ts gathers them; `setMetricsSource`). The hot path calls the small `record*` functions below; gauges are
 * read from their sources when a scrape collects them. Label values are bounded: model ids outside the
 * catalog become `other`, and every value is cut to 64 characters.
 */
import {
  AggregatorRegistry,
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  Registry,
  type MetricObjectWithValues,
  type MetricValue,
} from 'prom-client'

/** A breaker's state as a number: 0 closed, 1 half-open, 2 open. */
export type BreakerState = 0 | 1 | 2
export type BreakerReading = { provider: string; model: string; state: BreakerState }

export type RequestRecord = {
  style: string
  model: string
  provider: string
  status: number
  /** The error code of a refused or failed request; not a label (the status is), kept for callers' symmetry. */
  code?: string
  latencyMs: number
  firstByteMs?: number
}

export type MetricsSources = {
  /** Whether a model id is a catalog id; others are counted as `other`. */
  knownModel?: (model: string) => boolean
  /** Holds this process has open (gateway.inflight.size). */
  openHolds?: () => number
  /** Model requests in progress in this process (gateway.ceiling.inUse). */
  inflightRequests?: () => number
}

const MAX_LABEL_LENGTH = 64

export const registry = new Registry()
collectDefaultMetrics({ register: registry })

new Gauge({
  name: 'gateway_processes',
  help: 'Gateway processes whose series this scrape sums (WORKERS; fewer when one did not answer in time).',
  registers: [registry],
}).set(1)

let sources: MetricsSources = {}
let breakers: (() => Iterable<BreakerReading>) | undefined

const requests = new Counter({
  name: 'gateway_requests_total',
  help: 'Requests answered by the API server, by kind (chat, messages, responses, images; models: the catalog; account: claim and rotation), catalog model, provider and HTTP status.',
  labelNames: ['style', 'model', 'provider', 'status'] as const,
  registers: [registry],
})

const duration = new Histogram({
  name: 'gateway_request_duration_seconds',
  help: 'Time from the request reaching the gateway to its end (a stream: its last byte).',
  labelNames: ['style'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
  registers: [registry],
})

const firstByte = new Histogram({
  name: 'gateway_time_to_first_byte_seconds',
  help: "Time from the request reaching the gateway to the provider's first bytes (streams).",
  labelNames: ['style'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
  registers: [registry],
})

const admissions = new Counter({
  name: 'gateway_admission_outcomes_total',
  help: "Admission decisions: 'admitted' or the refusal's error code.",
  labelNames: ['outcome'] as const,
  registers: [registry],
})

const upstreamErrors = new Counter({
  name: 'gateway_upstream_errors_total',
  help: 'Failed provider attempts (fallbacks included), by provider and error code.',
  labelNames: ['provider', 'code'] as const,
  registers: [registry],
})

new Gauge({
  name: 'gateway_open_holds',
  help: 'Holds this process has open (admitted requests whose hold has not ended).',
  registers: [registry],
  collect() {
    this.set(sources.openHolds?.() ?? 0)
  },
})

new Gauge({
  name: 'gateway_inflight_requests',
  help: 'Model requests in progress in this process (counted against MAX_CONCURRENT_REQUESTS).',
  registers: [registry],
  collect() {
    this.set(sources.inflightRequests?.() ?? 0)
  },
})

new Gauge({
  name: 'gateway_breaker_state',
  help: 'Circuit breaker of each provider route: 0 closed, 1 half-open, 2 open.',
  labelNames: ['provider', 'model'] as const,
  registers: [registry],
  collect() {
    this.reset()
    if (!breakers) return
    // A route's model is the provider's own name for it, from the catalog's routes: a bounded set,
    // and not a catalog ID, so it is not folded into `other` as client-named models are.
    for (const reading of breakers())
      this.set({ provider: label(reading.provider), model: label(reading.model) }, reading.state)
  },
})

/** Connects the gauges to this process's gateway and the model check; called once by createApp. */
export function initMetrics(next: MetricsSources): void {
  sources = next
}

/**
 * Registers where breaker states come from (the routing code, once at boot); undefined removes it.
 * Until one is set, `gateway_breaker_state` has no series.
 */
export function setBreakerSource(source: (() => Iterable<BreakerReading>) | undefined): void {
  breakers = source
}

/**
 * One model request ended. Call it once per request where its request-log row is made (pipeline/settle.ts
 * `finishCall`, which runs for every answered, refused and streamed request, after a stream's last
 * byte), with `call.style`, `call.served?.model.id ?? call.requestedModel ?? ''`,
 * `call.served?.route.provider.id ?? ''`, `call.status`, `call.errorCode`, the latency and `call.firstByteMs`.
 * Also for a refusal before any hold (`overloaded` at the ceiling), where the pipeline returns it.
 */
export function recordRequest(r: RequestRecord): void {
  requests.inc({
    style: label(r.style),
    model: modelLabel(r.model),
    provider: label(r.provider),
    status: String(r.status),
  })
  duration.observe({ style: label(r.style) }, r.latencyMs / 1000)
  if (r.firstByteMs !== undefined)
    firstByte.observe({ style: label(r.style) }, r.firstByteMs / 1000)
}

/**
 * One admission decision. Call it in the pipeline right after stage 7 (`admitRequest`): `'admitted'` when
 * it passed, else the refusal's error code (`usage_limit_exceeded`, `spend_limit_exceeded`,
 * `insufficient_credits`, `admission_unconfirmed`, …).
 */
export function recordAdmission(outcome: string): void {
  admissions.inc({ outcome: label(outcome) })
}

/**
 * One failed provider attempt. Call it in providers/dispatch.ts where an attempt fails (beside the
 * 'upstream attempt failed' log line, and for a timeout), with the route's provider id and the error code
 * the failure maps to; a stream that breaks after it began is counted by the caller of the relay's end
 * (`outcome.failure.code`).
 */
export function recordUpstreamError(provider: string, code: string): void {
  upstreamErrors.inc({ provider: label(provider), code: label(code) })
}

/** One process's series, as `AggregatorRegistry.aggregate` takes them. */
export type MetricsJson = MetricObjectWithValues<MetricValue<string>>[]

let source: (() => Promise<string>) | undefined

/** Where a scrape's text comes from instead of this registry alone (all workers' sum); undefined: this one. */
export function setMetricsSource(next: (() => Promise<string>) | undefined): void {
  source = next
}

/** This process's series, for summing across processes. */
export function metricsJson(): Promise<MetricsJson> {
  return registry.getMetricsAsJSON() as Promise<MetricsJson>
}

/** Series types that only grow (the series name their type as the text format does, not as the typings say). */
const COUNTED_TYPES = new Set<unknown>(['counter', 'histogram'])

/**
 * The counters and histograms of several processes' series added up, as one process's series: what a
 * worker that exited had counted, so a sum over the workers never goes down (a falling counter reads as
 * a reset, and `rate` and `increase` would count its whole value again).
 */
export async function countedSeries(processes: MetricsJson[]): Promise<MetricsJson> {
  const counted = processes.map((series) =>
    series.filter((metric) => COUNTED_TYPES.has(metric.type)),
  )
  return (await AggregatorRegistry.aggregate(counted).getMetricsAsJSON()) as MetricsJson
}

/** The sum of several processes' series in the Prometheus text format. */
export function aggregateMetrics(processes: MetricsJson[]): Promise<string> {
  return AggregatorRegistry.aggregate(processes).metrics()
}

/** What a scrape answers, in the Prometheus text format. */
export function metricsText(): Promise<string> {
  return source ? source() : registry.metrics()
}

export const metricsContentType = registry.contentType

function label(value: string): string {
  return value.length > MAX_LABEL_LENGTH ? value.slice(0, MAX_LABEL_LENGTH) : value
}

function modelLabel(model: string): string {
  if (model && sources.knownModel && !sources.knownModel(model)) return 'other'
  return label(model)
}
