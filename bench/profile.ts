/**
 * `bun run bench --profile`: where the CPU of a request goes. For the 64-connection, zero-delay cell
 * (non-streaming, then streaming) a gateway is started under Bun's CPU profiler and loaded with wrk;
 * the CPU every process used over the measured seconds comes from /proc (the gateway per thread, Redis,
 * PostgreSQL, the fake upstream), and the gateway's JavaScript samples from those seconds
 * are split by the stage of the pipeline's stage list whose code was running (the innermost frame that
 * belongs to a known module decides; a built-in such as JSON.parse counts for the stage that called it).
 */
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { startGateway, type BenchModel } from './gateway.ts'
import type { LoadTool } from './wrk.ts'
import { cpuOfCommands, threadCpu } from './proc.ts'

/** Sampling interval of the profiler, in microseconds. */
const SAMPLE_US = 250
/** Functions listed by their own time, per column. */
const TOP_FUNCTIONS = 15

/** Where a sample's time is counted, in report order. */
export const STAGES = [
  'framework: routing and schema checks (Elysia, TypeBox)',
  'HTTP layer (servers, endpoint frame, ceiling)',
  'body read and JSON parse',
  'validation (schema limits)',
  'auth (key lookup)',
  'resolve and policy',
  'guardrails',
  'estimate',
  'admission (store code)',
  'Redis client (ioredis)',
  'dispatch (provider adapter, fetch)',
  'respond (answer, styles, stream relay)',
  'settle',
  'records (ledger and request-log batches)',
  'Postgres client',
  'metrics and logging',
  'pipeline (stage list)',
  'other gateway code',
  'Bun built-ins with no caller in a module',
] as const
type Stage = (typeof STAGES)[number]

/** Path fragments of module URLs, in the order they are tried, and the stage each counts for. */
const MODULE_STAGES: [string, Stage][] = [
  ['/node_modules/ioredis/', 'Redis client (ioredis)'],
  ['/node_modules/@ioredis/', 'Redis client (ioredis)'],
  ['/node_modules/redis-errors/', 'Redis client (ioredis)'],
  ['/node_modules/postgres/', 'Postgres client'],
  ['/node_modules/elysia/', 'framework: routing and schema checks (Elysia, TypeBox)'],
  ['/node_modules/@sinclair/', 'framework: routing and schema checks (Elysia, TypeBox)'],
  ['/node_modules/memoirist/', 'framework: routing and schema checks (Elysia, TypeBox)'],
  ['/proxy/pipeline/read-body.ts', 'body read and JSON parse'],
  ['/proxy/pipeline/validate.ts', 'validation (schema limits)'],
  ['/proxy/pipeline/schema-limits.ts', 'validation (schema limits)'],
  ['/proxy/pipeline/authenticate.ts', 'auth (key lookup)'],
  ['/proxy/stores/keys/', 'auth (key lookup)'],
  ['/proxy/policy/guardrails/', 'guardrails'],
  ['/proxy/policy/', 'resolve and policy'],
  ['/proxy/pipeline/estimate.ts', 'estimate'],
  ['/proxy/pipeline/admit.ts', 'admission (store code)'],
  ['/proxy/stores/admission/', 'admission (store code)'],
  ['/proxy/providers/', 'dispatch (provider adapter, fetch)'],
  ['/proxy/pipeline/answer.ts', 'respond (answer, styles, stream relay)'],
  ['/proxy/pipeline/respond.ts', 'respond (answer, styles, stream relay)'],
  ['/proxy/pipeline/styles/', 'respond (answer, styles, stream relay)'],
  ['/proxy/pipeline/streams/', 'respond (answer, styles, stream relay)'],
  ['/proxy/core/neutral/', 'respond (answer, styles, stream relay)'],
  ['/proxy/pipeline/settle.ts', 'settle'],
  ['/proxy/stores/ledger/', 'records (ledger and request-log batches)'],
  ['/proxy/stores/', 'records (ledger and request-log batches)'],
  ['/proxy/core/metrics.ts', 'metrics and logging'],
  ['/proxy/core/log.ts', 'metrics and logging'],
  ['/proxy/pipeline/pipeline.ts', 'pipeline (stage list)'],
  ['/proxy/pipeline/gateway.ts', 'pipeline (stage list)'],
  ['/proxy/pipeline/', 'HTTP layer (servers, endpoint frame, ceiling)'],
  ['/proxy/http/', 'HTTP layer (servers, endpoint frame, ceiling)'],
  ['/proxy/', 'other gateway code'],
  ['/shared/', 'other gateway code'],
]

type ProfileNode = {
  id: number
  callFrame: { functionName: string; url: string }
  children?: number[]
}
type CpuProfile = {
  nodes: ProfileNode[]
  startTime: number
  samples: number[]
  timeDeltas: number[]
}

type CpuReading = {
  gateway: Map<string, number>
  redis: number
  postgres: number
  upstream: number
}

async function readCpu(gatewayPid: number, upstreamPid: number): Promise<CpuReading> {
  const [gateway, redis, postgres, upstream] = await Promise.all([
    threadCpu(gatewayPid),
    cpuOfCommands(['redis-server']),
    cpuOfCommands(['postgres']),
    threadCpu(upstreamPid),
  ])
  const sum = (map: Map<string, number>) => [...map.values()].reduce((a, b) => a + b, 0)
  return { gateway, redis, postgres, upstream: sum(upstream) }
}

/** The stage of each profile node: its own module's, else its caller's, up to the root. */
function stagesOfNodes(profile: CpuProfile): Map<number, Stage> {
  const parent = new Map<number, number>()
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id)
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const stages = new Map<number, Stage>()
  for (const node of profile.nodes) {
    let stage: Stage = 'Bun built-ins with no caller in a module'
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const url = byId.get(id)?.callFrame.url ?? ''
      const match = url ? MODULE_STAGES.find(([fragment]) => url.includes(fragment)) : undefined
      if (match) {
        stage = match[1]
        break
      }
    }
    stages.set(node.id, stage)
  }
  return stages
}

/** A function's name and where it is, for the list of the costliest functions. */
function placeOf(node: ProfileNode, stage: Stage): string {
  const { functionName, url } = node.callFrame
  const name = functionName || '(anonymous)'
  const file = url.replace(/^file:\/\//, '').replace(/^.*\/(node_modules|proxy|shared)\//, '$1/')
  return file ? `${name} (${file})` : `${name} [${stage}]`
}

/** Samples between two wall-clock instants (epoch milliseconds), by stage and by function. */
function countSamples(
  profile: CpuProfile,
  fromMs: number,
  toMs: number,
): { byStage: Map<Stage, number>; byFunction: Map<string, number> } {
  const stages = stagesOfNodes(profile)
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const byStage = new Map<Stage, number>()
  const byFunction = new Map<string, number>()
  let atUs = profile.startTime
  profile.samples.forEach((nodeId, index) => {
    atUs += profile.timeDeltas[index] ?? 0
    const atMs = atUs / 1000
    if (atMs < fromMs || atMs > toMs) return
    const stage = stages.get(nodeId)!
    byStage.set(stage, (byStage.get(stage) ?? 0) + 1)
    const place = placeOf(byId.get(nodeId)!, stage)
    byFunction.set(place, (byFunction.get(place) ?? 0) + 1)
  })
  return { byStage, byFunction }
}

export type StageProfile = {
  stream: boolean
  requests: number
  rps: number
  /** Microseconds of the gateway's JavaScript per request, by stage (samples × interval). */
  stagesUs: Map<Stage, number>
  /** The functions that used the most of it themselves (not counting what they called), µs per request. */
  topFunctionsUs: [string, number][]
  /** CPU per request in microseconds. */
  gatewayMainUs: number
  gatewayThreadsUs: [string, number][]
  redisUs: number
  postgresUs: number
  upstreamUs: number
}

/** Profiles one cell: a fresh gateway under the profiler, a warm-up, then `durationS` measured. */
export async function profileCell(options: {
  stream: boolean
  durationS: number
  warmupS: number
  tool: LoadTool
  repoDir: string
  scratchDir: string
  upstream: { origin: string; pid: number }
  storeEnv: Record<string, string>
  probe: (
    apiUrl: string,
    key: string,
    model: BenchModel,
    stream: boolean,
  ) => {
    url: string
    body: string
    headers: Record<string, string>
  }
  setUp: (gateway: Awaited<ReturnType<typeof startGateway>>) => Promise<string>
}): Promise<StageProfile> {
  const profileDir = join(options.scratchDir, `profile-${options.stream ? 'stream' : 'json'}`)
  const gateway = await startGateway({
    repoDir: options.repoDir,
    scratchDir: options.scratchDir,
    upstreamOrigin: options.upstream.origin,
    storeEnv: options.storeEnv,
    workers: 1,
    bunArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-interval=${SAMPLE_US}`],
  })
  const key = await options.setUp(gateway)
  const spec = {
    ...options.probe(gateway.apiUrl, key, 'bench/fast', options.stream),
    connections: 64,
  }
  if (options.warmupS > 0) await options.tool.run({ ...spec, durationS: options.warmupS })
  const before = await readCpu(gateway.pid, options.upstream.pid)
  const fromMs = Date.now()
  const result = await options.tool.run({ ...spec, durationS: options.durationS })
  const toMs = Date.now()
  const after = await readCpu(gateway.pid, options.upstream.pid)
  await gateway.stop()

  const files = (await readdir(profileDir)).filter((name) => name.endsWith('.cpuprofile'))
  if (files.length === 0) throw new Error(`the gateway wrote no CPU profile to ${profileDir}`)
  const profile = JSON.parse(await readFile(join(profileDir, files[0]!), 'utf8')) as CpuProfile
  const perRequestUs = (seconds: number) => (seconds * 1e6) / Math.max(1, result.requests)
  const counted = countSamples(profile, fromMs, toMs)
  const sampleUs = (samples: number) => (samples * SAMPLE_US) / Math.max(1, result.requests)
  const stagesUs = new Map<Stage, number>()
  for (const [stage, samples] of counted.byStage) stagesUs.set(stage, sampleUs(samples))
  const topFunctionsUs = [...counted.byFunction]
    .sort((a, b) => b[1] - a[1])
    .slice(0, TOP_FUNCTIONS)
    .map(([place, samples]) => [place, sampleUs(samples)] as [string, number])
  const threads = [...after.gateway].map(
    ([name, seconds]) => [name, perRequestUs(seconds - (before.gateway.get(name) ?? 0))] as const,
  )
  return {
    stream: options.stream,
    requests: result.requests,
    rps: result.rps,
    stagesUs,
    topFunctionsUs,
    gatewayMainUs: threads.find(([name]) => name === 'main')?.[1] ?? 0,
    gatewayThreadsUs: threads
      .filter(([name, us]) => name !== 'main' && us >= 0.5)
      .sort((a, b) => b[1] - a[1])
      .map(([name, us]) => [name, us]),
    redisUs: perRequestUs(after.redis - before.redis),
    postgresUs: perRequestUs(after.postgres - before.postgres),
    upstreamUs: perRequestUs(after.upstream - before.upstream),
  }
}
