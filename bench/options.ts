/** Command-line options of `bun run bench`. */
import { parseArgs } from 'node:util'

export const usage = `Usage: bun run bench [--quick] [--duration S] [--warmup S] [--connections 1,16,64] [--workers N] [--open-streams N] [--profile] [--perf] [--out FILE]

  --quick          short smoke run: 1 s per cell, no warm-up
  --duration S     measured seconds per target and cell (default 5)
  --warmup S       warm-up seconds before each measurement (default 1; 0: none)
  --connections L  comma-separated connection counts (default 1,16,64)
  --workers N      gateway API processes (its WORKERS setting; default 1; above 1 needs both stores)
  --open-streams N streams held open at once against a slow provider, for memory per stream
                   (default 1000, --quick 200; 0: skip)
  --profile        only the 64-connection zero-delay cell, streaming and not, with the gateway under
                   Bun's CPU profiler: CPU per request by pipeline stage, per gateway thread, and of
                   Redis, PostgreSQL and the upstream
  --perf           only the 64-connection zero-delay cell, streaming and not, through the bare proxy and
                   the gateway with Linux perf sampling the main thread: CPU per request in the kernel,
                   in native code and in JavaScript, by innermost JavaScript function (needs perf)
  --out FILE       also write the Markdown report to FILE

Environment: DATABASE_URL and REDIS_URL (optional) make the gateway use those servers: a fresh database
and a unique key prefix, both removed at the end. Without them it uses its embedded stores.
WRK_PATH names the wrk binary (default /usr/bin/wrk, then wrk on PATH); without wrk, autocannon runs
through bunx.`

export type BenchOptions = {
  durationS: number
  warmupS: number
  connections: number[]
  workers: number
  /** Streamed requests timed to their first byte, per target. */
  firstByteSamples: number
  openStreams: number
  profile: boolean
  perf: boolean
  out: string | undefined
}

export class UsageError extends Error {}

function wholeNumber(
  value: string | undefined,
  name: string,
  fallback: number,
  minimum: number,
): number {
  if (value === undefined) return fallback
  if (!/^\d+$/.test(value) || Number(value) < minimum)
    throw new UsageError(`--${name} must be a whole number ≥ ${minimum}`)
  return Number(value)
}

/** Parses the arguments; undefined when help was asked for. */
export function parseOptions(args: string[]): BenchOptions | undefined {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      quick: { type: 'boolean' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      workers: { type: 'string' },
      'open-streams': { type: 'string' },
      profile: { type: 'boolean' },
      perf: { type: 'boolean' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) return undefined
  if (values.profile && values.perf)
    throw new UsageError('--profile and --perf are separate runs: choose one')
  const connections = (values.connections ?? '1,16,64')
    .split(',')
    .map((part) => wholeNumber(part.trim(), 'connections', 0, 1))
  return {
    durationS: wholeNumber(values.duration, 'duration', values.quick ? 1 : 5, 1),
    warmupS: wholeNumber(values.warmup, 'warmup', values.quick ? 0 : 1, 0),
    connections,
    workers: wholeNumber(values.workers, 'workers', 1, 1),
    firstByteSamples: values.quick ? 100 : 500,
    openStreams: wholeNumber(values['open-streams'], 'open-streams', values.quick ? 200 : 1_000, 0),
    profile: values.profile ?? false,
    perf: values.perf ?? false,
    out: values.out,
  }
}
