/**
 * Load generation: wrk with one thread and a Lua script that sets the POST request and prints its
 * results as one JSON line (latencies in microseconds). When wrk is not installed, autocannon (through
 * `bunx`) is used instead, with the same inputs and outputs.
 */
import { join } from 'node:path'
import { capture } from './processes.ts'

/** One load run: `connections` keep-alive connections sending the same request for `durationS` seconds. */
export type LoadSpec = {
  url: string
  body: string
  headers: Record<string, string>
  connections: number
  durationS: number
}

/** What a load run measured. Latencies are microseconds; `failed` counts socket errors and timeouts. */
export type LoadResult = {
  requests: number
  rps: number
  p50Us: number
  p99Us: number
  non2xx: number
  failed: number
}

/** A load generator; `label` describes it for the report. */
export type LoadTool = {
  name: 'wrk' | 'autocannon'
  label: string
  run(spec: LoadSpec): Promise<LoadResult>
}

const RESULT_MARK = 'BENCH_RESULT '
const TIMEOUT_S = 10

/** wrk at WRK_PATH (default /usr/bin/wrk, then wrk on PATH), or autocannon when there is none. */
export async function loadTool(scratchDir: string): Promise<LoadTool> {
  const wrk =
    process.env.WRK_PATH ??
    ((await Bun.file('/usr/bin/wrk').exists()) ? '/usr/bin/wrk' : Bun.which('wrk'))
  if (wrk && (await Bun.file(wrk).exists())) {
    const version = firstLine(await capture([wrk, '-v']), 'wrk').replace(/\s+Copyright.*$/, '')
    let scripts = 0
    return {
      name: 'wrk',
      label: `${version}, one thread`,
      run: (spec) => runWrk(wrk, join(scratchDir, `wrk-${++scripts}.lua`), spec),
    }
  }
  const version = firstLine(await capture(['bunx', 'autocannon', '--version']), 'autocannon')
  return {
    name: 'autocannon',
    label: `${version} via bunx (wrk not found; latencies in whole milliseconds)`,
    run: runAutocannon,
  }
}

function firstLine(printed: { stdout: string; stderr: string }, fallback: string): string {
  return (printed.stdout.trim() || printed.stderr.trim()).split('\n')[0]?.trim() || fallback
}

/** A Lua long string that cannot be closed by anything inside `text`. */
export function luaString(text: string): string {
  let level = 1
  while (text.includes(`]${'='.repeat(level)}]`)) level += 1
  const eq = '='.repeat(level)
  return `[${eq}[${text}]${eq}]`
}

function wrkScript(spec: LoadSpec): string {
  const headers = Object.entries(spec.headers)
    .map(([name, value]) => `wrk.headers[ ${luaString(name)} ] = ${luaString(value)}`)
    .join('\n')
  return `wrk.method = "POST"
wrk.body = ${luaString(spec.body)}
${headers}

${WRK_DONE}`
}

/** The `done` function of a wrk script: one line with the run's totals, read back by `wrkResult`. */
export const WRK_DONE = `done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('${RESULT_MARK}{"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\\n',
    summary.requests, summary.duration, math.floor(latency:percentile(50)), math.floor(latency:percentile(99)),
    e.connect, e.read, e.write, e.status, e.timeout))
end
`

export type WrkLine = {
  requests: number
  durationUs: number
  p50Us: number
  p99Us: number
  connect: number
  read: number
  write: number
  status: number
  timeout: number
}

/** The totals a script ending in WRK_DONE printed. */
export function wrkResult(printed: { stdout: string; stderr: string }, what: string): WrkLine {
  const line = printed.stdout.split('\n').find((candidate) => candidate.startsWith(RESULT_MARK))
  if (!line)
    throw new Error(`wrk printed no result for ${what}:\n${printed.stdout}${printed.stderr}`)
  return JSON.parse(line.slice(RESULT_MARK.length)) as WrkLine
}

async function runWrk(wrk: string, scriptPath: string, spec: LoadSpec): Promise<LoadResult> {
  await Bun.write(scriptPath, wrkScript(spec))
  const cmd = [
    wrk,
    '-t1',
    `-c${spec.connections}`,
    `-d${spec.durationS}s`,
    `--timeout`,
    `${TIMEOUT_S}s`,
    '-s',
    scriptPath,
    spec.url,
  ]
  const printed = await capture(cmd)
  const r = wrkResult(printed, spec.url)
  return {
    requests: r.requests,
    rps: r.durationUs > 0 ? r.requests / (r.durationUs / 1e6) : 0,
    p50Us: r.p50Us,
    p99Us: r.p99Us,
    non2xx: r.status,
    failed: r.connect + r.read + r.write + r.timeout,
  }
}

type AutocannonJson = {
  requests: { total: number; average: number }
  latency: { p50: number; p99: number }
  duration: number
  non2xx: number
  errors: number
  timeouts: number
}

async function runAutocannon(spec: LoadSpec): Promise<LoadResult> {
  const headers = Object.entries(spec.headers).flatMap(([name, value]) => [
    '-H',
    `${name}=${value}`,
  ])
  const cmd = ['bunx', 'autocannon', '-j', '-m', 'POST', '-b', spec.body, ...headers]
  cmd.push(
    '-c',
    String(spec.connections),
    '-d',
    String(spec.durationS),
    '-t',
    String(TIMEOUT_S),
    spec.url,
  )
  const printed = await capture(cmd)
  const start = printed.stdout.indexOf('{')
  if (start < 0)
    throw new Error(
      `autocannon printed no result for ${spec.url}:\n${printed.stdout}${printed.stderr}`,
    )
  const r = JSON.parse(printed.stdout.slice(start)) as AutocannonJson
  return {
    requests: r.requests.total,
    rps: r.duration > 0 ? r.requests.total / r.duration : r.requests.average,
    p50Us: Math.round(r.latency.p50 * 1000),
    p99Us: Math.round(r.latency.p99 * 1000),
    non2xx: r.non2xx,
    failed: r.errors + r.timeouts,
  }
}
