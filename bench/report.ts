/**
 * The benchmark's result as Markdown: the setup, a throughput table and a latency table (one row per
 * cell, the three targets side by side, all from the same run), the targets, and the checks.
 */
import type { FinalState } from './checks.ts'
import type { Machine } from './machine.ts'
import type { BenchStores } from './stores.ts'
import type { FirstByte, OpenStreams } from './streams.ts'
import type { LoadResult } from './wrk.ts'

export const targets = ['direct', 'bare', 'gateway'] as const
export type Target = (typeof targets)[number]

/** One combination of request kind, upstream delay and connection count. */
export type Cell = { stream: boolean; delayMs: number; connections: number }
export type CellResult = Cell & { results: Record<Target, LoadResult> }

/** Everything the report shows. */
export type BenchReport = {
  startedAt: Date
  machine: Machine
  /** Fraction of CPU the machine used in the second before the run started (other processes). */
  busyBefore: number | undefined
  /** The gateway's code: commit, and whether it had uncommitted changes. */
  revision: string
  /** Gateway API processes (WORKERS). */
  workers: number
  tool: string
  stores: BenchStores
  durationS: number
  warmupS: number
  cells: CellResult[]
  /** Time to a stream's first bytes, one request at a time, zero-delay upstream. */
  firstByte: Record<Target, FirstByte>
  /** Memory with many streams open at once against a slow provider (bare proxy and gateway). */
  openStreams: Partial<Record<'bare' | 'gateway', OpenStreams>>
  final: FinalState
  creditNano: number
  gatewayLog: { lines: number; samples: string[]; notices: string[] }
}

/** Throughput target: gateway ≥ this fraction of the bare proxy, zero-delay upstream, at this many connections. */
export const THROUGHPUT_TARGET = { fraction: 0.5, connections: 64 }
/** Latency target: gateway minus direct, in ms, at this many connections. */
export const LATENCY_TARGET = { p50Ms: 0.4, p99Ms: 1.5, connections: 16 }
/** Latency target below saturation: gateway minus direct at p50, in ms, one connection, zero-delay upstream. */
export const ONE_CONNECTION_TARGET = { p50Ms: 0.25, connections: 1 }

const mode = (cell: Cell) => (cell.stream ? 'streaming' : 'non-streaming')
const ms = (us: number) => (us / 1000).toFixed(2)
const signedMs = (us: number) => `${us >= 0 ? '+' : '−'}${ms(Math.abs(us))}`
const rps = (value: number) => Math.round(value).toLocaleString('en-US')
const busy = (fraction: number | undefined) =>
  fraction === undefined ? '' : `; ${Math.round(fraction * 100)}% busy just before the run`
const usd = (nano: number) => `$${(nano / 1e9).toFixed(6)}`

function table(head: string[], align: ('l' | 'r')[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`
  return [line(head), line(align.map((a) => (a === 'r' ? '---:' : '---'))), ...rows.map(line)].join(
    '\n',
  )
}

function failures(cell: CellResult): string {
  const parts = targets.flatMap((target) => {
    const r = cell.results[target]
    return [
      r.non2xx ? `${target} ${r.non2xx} non-2xx` : '',
      r.failed ? `${target} ${r.failed} socket errors` : '',
    ].filter(Boolean)
  })
  return parts.length > 0 ? parts.join(', ') : '0'
}

function throughputTable(cells: CellResult[]): string {
  const rows = cells.map((cell) => {
    const { direct, bare, gateway } = cell.results
    return [
      mode(cell),
      `${cell.delayMs} ms`,
      String(cell.connections),
      rps(direct.rps),
      rps(bare.rps),
      rps(gateway.rps),
      fraction(gateway, bare),
      failures(cell),
    ]
  })
  return table(
    [
      'Mode',
      'Upstream delay',
      'Conns',
      'Direct rps',
      'Bare proxy rps',
      'Gateway rps',
      'Gateway ÷ bare',
      'Errors',
    ],
    ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'l'],
    rows,
  )
}

function fraction(gateway: LoadResult, bare: LoadResult): string {
  return bare.rps > 0 ? (gateway.rps / bare.rps).toFixed(2) : '–'
}

function latencyTable(cells: CellResult[]): string {
  const rows = cells.map((cell) => {
    const { direct, bare, gateway } = cell.results
    return [
      mode(cell),
      `${cell.delayMs} ms`,
      String(cell.connections),
      ms(direct.p50Us),
      ms(bare.p50Us),
      ms(gateway.p50Us),
      ms(direct.p99Us),
      ms(bare.p99Us),
      ms(gateway.p99Us),
      signedMs(gateway.p50Us - direct.p50Us),
      signedMs(gateway.p99Us - direct.p99Us),
    ]
  })
  const head = [
    'Mode',
    'Upstream delay',
    'Conns',
    'p50 direct',
    'p50 bare',
    'p50 gateway',
    'p99 direct',
    'p99 bare',
    'p99 gateway',
    'Added p50',
    'Added p99',
  ]
  return table(head, ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'], rows)
}

/** Memory per open stream target, in bytes. */
export const OPEN_STREAM_TARGET_BYTES = 64 * 1024

function firstByteTable(firstByte: Record<Target, FirstByte>): string {
  const { direct, bare, gateway } = firstByte
  const row = (label: string, pick: (result: FirstByte) => number) => [
    label,
    ms(pick(direct)),
    ms(pick(bare)),
    ms(pick(gateway)),
    signedMs(pick(gateway) - pick(direct)),
  ]
  return table(
    ['First byte of a stream', 'direct', 'bare', 'gateway', 'Added by the gateway'],
    ['l', 'r', 'r', 'r', 'r'],
    [row('p50', (r) => r.p50Us), row('p99', (r) => r.p99Us)],
  )
}

function openStreamLines(openStreams: BenchReport['openStreams']): string[] {
  const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`
  return Object.entries(openStreams).map(
    ([target, result]) =>
      `- ${target === 'gateway' ? 'Gateway' : 'Bare proxy'}: ${result.streams.toLocaleString('en-US')} streams open at once, resident memory ${mb(result.beforeBytes)} → ` +
      `${mb(result.openBytes)}: **${(result.perStreamBytes / 1024).toFixed(1)} KB per open stream**` +
      (target === 'gateway' ? ` (target ≤ ${OPEN_STREAM_TARGET_BYTES / 1024} KB)` : '') +
      `; ${result.completed.toLocaleString('en-US')} of them read to \`data: [DONE]\`.`,
  )
}

function targetLines(report: BenchReport): string[] {
  const lines: string[] = []
  const met = (ok: boolean) => (ok ? 'met' : '**missed**')
  for (const cell of report.cells.filter(
    (c) => c.delayMs === 0 && c.connections === THROUGHPUT_TARGET.connections,
  )) {
    const ratio = cell.results.bare.rps > 0 ? cell.results.gateway.rps / cell.results.bare.rps : 0
    lines.push(
      `- Throughput, ${mode(cell)}, zero delay, ${cell.connections} connections: gateway ${ratio.toFixed(2)} × bare proxy ` +
        `(target ≥ ${THROUGHPUT_TARGET.fraction}): ${met(ratio >= THROUGHPUT_TARGET.fraction)}`,
    )
  }
  for (const cell of report.cells.filter(
    (c) => c.delayMs === 0 && c.connections === ONE_CONNECTION_TARGET.connections,
  )) {
    const addedP50 = (cell.results.gateway.p50Us - cell.results.direct.p50Us) / 1000
    lines.push(
      `- Added latency, ${mode(cell)}, zero delay, one connection: p50 ${addedP50.toFixed(2)} ms ` +
        `(target ≤ ${ONE_CONNECTION_TARGET.p50Ms}): ${met(addedP50 <= ONE_CONNECTION_TARGET.p50Ms)}`,
    )
  }
  for (const cell of report.cells.filter((c) => c.connections === LATENCY_TARGET.connections)) {
    const addedP50 = (cell.results.gateway.p50Us - cell.results.direct.p50Us) / 1000
    const addedP99 = (cell.results.gateway.p99Us - cell.results.direct.p99Us) / 1000
    lines.push(
      `- Added latency, ${mode(cell)}, ${cell.delayMs} ms delay, ${cell.connections} connections: p50 ${addedP50.toFixed(2)} ms ` +
        `(target ≤ ${LATENCY_TARGET.p50Ms}): ${met(addedP50 <= LATENCY_TARGET.p50Ms)}; p99 ${addedP99.toFixed(2)} ms ` +
        `(target ≤ ${LATENCY_TARGET.p99Ms}): ${met(addedP99 <= LATENCY_TARGET.p99Ms)}`,
    )
  }
  const open = report.openStreams.gateway
  if (open) {
    const kb = open.perStreamBytes / 1024
    lines.push(
      `- Memory per open stream: ${kb.toFixed(1)} KB (target ≤ ${OPEN_STREAM_TARGET_BYTES / 1024} KB): ${met(open.perStreamBytes <= OPEN_STREAM_TARGET_BYTES)}`,
    )
  }
  if (!report.stores.real.redis)
    lines.push(
      '- The throughput target is stated for real Redis; this run used the in-process admission store.',
    )
  return lines
}

function checkLines(report: BenchReport): string[] {
  const { state, holdsEnded, ledgerMatches, waitedMs } = report.final
  const gatewayRequests = report.cells.reduce((sum, cell) => sum + cell.results.gateway.requests, 0)
  const failed = report.cells.filter((cell) => failures(cell) !== '0')
  const lines = [
    '- Before the load: one non-streaming and one streaming request to each target answered 200; through the gateway the answer had `usage.cost` and the stream ended with `data: [DONE]`.',
    `- After the load (${(waitedMs / 1000).toFixed(1)} s later): held ${state.heldNano} nano, in flight ${state.inFlight}: ` +
      (holdsEnded ? 'every hold ended.' : '**holds are still open.**'),
    `- Live balance ${state.balanceNano} nano, ledger ${state.ledgerBalanceNano} nano: ` +
      (ledgerMatches
        ? 'they match.'
        : `**they differ by ${state.balanceNano - state.ledgerBalanceNano} nano.**`),
    `- Charged ${usd(report.creditNano - state.balanceNano)} for ${gatewayRequests.toLocaleString('en-US')} measured gateway requests (plus warm-ups and probes).`,
    failed.length === 0
      ? '- No non-2xx answers or socket errors during the measured runs.'
      : `- **Errors in ${failed.length} cells** (see the Errors column).`,
    report.gatewayLog.lines === 0
      ? '- The gateway logged no warnings or errors once it served.'
      : `- **The gateway logged ${report.gatewayLog.lines} warning/error lines**, e.g.:\n${report.gatewayLog.samples.map((s) => `  - \`${s}\``).join('\n')}`,
  ]
  if (report.gatewayLog.notices.length > 0)
    lines.push(
      `- Its start-up notices (the bench's settings): ${report.gatewayLog.notices.map((notice) => `\`${notice}\``).join('; ')}.`,
    )
  return lines
}

/** The whole report as Markdown. */
export function renderReport(report: BenchReport): string {
  const { machine, stores } = report
  const storesLabel = stores.real.postgres || stores.real.redis ? 'real stores' : 'embedded stores'
  return `### Gateway benchmark: ${storesLabel}

- Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGb} GB RAM, ${machine.kernel}${busy(report.busyBefore)}
- Bun ${machine.bun}; load by ${report.tool}, keep-alive connections
- Gateway: ${report.revision}; ${report.workers === 1 ? 'one process' : `${report.workers} API processes (WORKERS)`}; stores: ${stores.database}; ${stores.admission}; the account's rate limits off, its concurrency limit the default 256 (lifted for the open streams)
- Each cell: ${report.warmupS > 0 ? `${report.warmupS} s warm-up, then ` : ''}${report.durationS} s measured per target, the three targets back to back; run started ${report.startedAt.toISOString()}

#### Throughput

${throughputTable(report.cells)}

#### Latency (ms)

${latencyTable(report.cells)}

Added = gateway − direct (the fake upstream called without a proxy).

#### Streams

${firstByteTable(report.firstByte)}

Each target's first byte: ${report.firstByte.gateway.samples} streamed requests one after another (after 50 unmeasured), from sending the
request to the first bytes of the body, zero-delay upstream.

${openStreamLines(report.openStreams).join('\n')}

The open streams go to a slow provider (one event every 250 ms, each its own write, 40 events); memory is
the process's resident set before they start and once all have begun, and the difference is divided by
their number.

#### Targets

${targetLines(report).join('\n')}

#### Checks

${checkLines(report).join('\n')}
`
}
