/**
 * `bun run bench`: measures what the gateway costs on top of a provider. Starts a fake upstream, a bare
 * pass-through Bun proxy and the gateway (each its own process), then drives every cell (streaming or
 * not × upstream delay 0 or 50 ms × connection count) against the three targets back to back, and prints
 * the results as Markdown. Progress goes to stderr, the report to stdout (and to --out FILE).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { usdToNano } from '../shared/money.ts'
import { checkTarget, gatewayLogProblems, settledAccount, type Probe } from './checks.ts'
import { benchModels, startGateway, type BenchModel } from './gateway.ts'
import { describeMachine, gatewayRevision, machineBusy } from './machine.ts'
import { parseOptions, usage, UsageError, type BenchOptions } from './options.ts'
import {
  cleanup,
  cleanUpOnSignals,
  freePort,
  startService,
  runCommand,
  spawnChild,
  tail,
  waitForHttp,
} from './processes.ts'
import { renderReport, targets, type Cell, type CellResult, type Target } from './report.ts'
import { perfRun } from './perf-run.ts'
import { profileCell, type StageProfile } from './profile.ts'
import { renderProfile } from './profile-report.ts'
import { prepareStores } from './stores.ts'
import {
  measureFirstByte,
  measureOpenStreams,
  type FirstByte,
  type OpenStreams,
} from './streams.ts'
import { loadTool, type LoadResult } from './wrk.ts'

const REPO_DIR = join(import.meta.dir, '..')
const CREDIT_USD = '1000000'
const DELAYS: Record<number, BenchModel> = { 0: 'bench/fast', 50: 'bench/slow' }

const progress = (message: string) => process.stderr.write(`${message}\n`)

/** The request body each target gets: the gateway's model ID for the gateway, the upstream name otherwise. */
function requestBody(model: string, stream: boolean): string {
  return JSON.stringify({
    model,
    messages: [
      { role: 'system', content: 'You are a benchmark.' },
      { role: 'user', content: 'Say hello.' },
    ],
    max_tokens: 64,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  })
}

function cellsOf(options: BenchOptions): Cell[] {
  return [false, true].flatMap((stream) =>
    [0, 50].flatMap((delayMs) =>
      options.connections.map((connections) => ({ stream, delayMs, connections })),
    ),
  )
}

async function benchmark(options: BenchOptions, scratchDir: string): Promise<string> {
  const startedAt = new Date()
  const runId = String(startedAt.getTime())
  const [machine, tool] = await Promise.all([describeMachine(), loadTool(scratchDir)])
  progress(
    `machine: ${machine.cpu}, ${machine.cores} cores, Bun ${machine.bun}; load tool: ${tool.label}`,
  )
  const busyBefore = await machineBusy()
  if (busyBefore !== undefined && busyBefore > 0.1)
    progress(
      `warning: the machine is ${Math.round(busyBefore * 100)}% busy before the run; results will be noisy`,
    )

  const stores = await prepareStores(
    process.env.DATABASE_URL || undefined,
    process.env.REDIS_URL || undefined,
    runId,
  )
  progress(`gateway stores: ${stores.database}; ${stores.admission}`)
  const { origin: upstream } = await startService(
    'fake-upstream',
    'fake-upstream.ts',
    [],
    scratchDir,
  )
  const { origin: bare, pid: barePid } = await startService(
    'bare-proxy',
    'bare-proxy.ts',
    [upstream],
    scratchDir,
  )
  const gateway = await startGateway({
    repoDir: REPO_DIR,
    scratchDir,
    upstreamOrigin: upstream,
    storeEnv: stores.env,
    workers: options.workers,
  })
  progress(
    `upstream ${upstream}, bare proxy ${bare}, gateway ${gateway.apiUrl} (site ${gateway.siteUrl})`,
  )

  const accountId = await gateway.operator.createAccount(CREDIT_USD)
  const key = await gateway.operator.createKey(accountId)
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` }
  const origins: Record<Target, string> = { direct: upstream, bare, gateway: gateway.apiUrl }
  const probeOf = (target: Target, model: BenchModel, stream: boolean): Probe => ({
    url: `${origins[target]}/v1/chat/completions`,
    body: requestBody(target === 'gateway' ? model : benchModels[model], stream),
    headers,
  })
  const probe = (target: Target, cell: Pick<Cell, 'stream' | 'delayMs'>) =>
    probeOf(target, DELAYS[cell.delayMs]!, cell.stream)

  for (const target of targets) {
    for (const stream of [false, true])
      await checkTarget(target, probe(target, { stream, delayMs: 0 }), stream, target === 'gateway')
  }
  progress('checks before load: passed')

  const cells: CellResult[] = []
  for (const cell of cellsOf(options)) {
    const results = {} as Record<Target, LoadResult>
    for (const target of targets) {
      const spec = { ...probe(target, cell), connections: cell.connections }
      if (options.warmupS > 0) await tool.run({ ...spec, durationS: options.warmupS })
      results[target] = await tool.run({ ...spec, durationS: options.durationS })
    }
    cells.push({ ...cell, results })
    const summary = targets
      .map(
        (t) =>
          `${t} ${Math.round(results[t].rps)} rps p50 ${(results[t].p50Us / 1000).toFixed(2)} ms`,
      )
      .join(' | ')
    progress(
      `${cell.stream ? 'stream' : 'json  '} delay ${String(cell.delayMs).padStart(2)} ms c=${String(cell.connections).padStart(3)}: ${summary}`,
    )
  }

  const firstByte = {} as Record<Target, FirstByte>
  for (const target of targets)
    firstByte[target] = await measureFirstByte(
      probe(target, { stream: true, delayMs: 0 }),
      options.firstByteSamples,
      50,
    )
  progress(
    `first byte of a stream, p50: ${targets.map((t) => `${t} ${(firstByte[t].p50Us / 1000).toFixed(2)} ms`).join(' | ')}`,
  )

  const openStreams: Partial<Record<'bare' | 'gateway', OpenStreams>> = {}
  if (options.openStreams > 0) {
    // More streams at once than the default concurrency limit lets one account have.
    await gateway.operator.liftConcurrencyLimit(accountId)
    for (const [target, pid] of [
      ['bare', barePid],
      ['gateway', gateway.pid],
    ] as const) {
      openStreams[target] = await measureOpenStreams(
        probeOf(target, 'bench/drip', true),
        options.openStreams,
        pid,
        1_000,
      )
      const result = openStreams[target]!
      progress(
        `${options.openStreams} open streams, ${target}: ${(result.perStreamBytes / 1024).toFixed(1)} KB each, ${result.completed} completed`,
      )
    }
  }

  const final = await settledAccount(gateway.operator, accountId, 10_000)
  progress(
    `after load: held ${final.state.heldNano} nano, in flight ${final.state.inFlight}, balance ${final.state.balanceNano} vs ledger ${final.state.ledgerBalanceNano}`,
  )
  return renderReport({
    startedAt,
    machine,
    busyBefore,
    revision: await gatewayRevision(REPO_DIR),
    workers: options.workers,
    tool: tool.label,
    stores,
    durationS: options.durationS,
    warmupS: options.warmupS,
    cells,
    firstByte,
    openStreams,
    final,
    creditNano: usdToNano(CREDIT_USD)!,
    gatewayLog: await gatewayLogProblems(gateway.logFile, gateway.startupLogBytes),
  })
}

/** `--profile`: the 64-connection zero-delay cell, streaming and not, with the gateway's CPU split by stage. */
async function profileRun(options: BenchOptions, scratchDir: string): Promise<string> {
  const runId = String(Date.now())
  const [machine, tool] = await Promise.all([describeMachine(), loadTool(scratchDir)])
  const stores = await prepareStores(
    process.env.DATABASE_URL || undefined,
    process.env.REDIS_URL || undefined,
    runId,
  )
  progress(`profile: gateway stores: ${stores.database}; ${stores.admission}`)
  const upstream = await startService('fake-upstream', 'fake-upstream.ts', [], scratchDir)
  const profiles: StageProfile[] = []
  for (const stream of [false, true]) {
    const profile = await profileCell({
      stream,
      durationS: options.durationS,
      warmupS: options.warmupS,
      tool,
      repoDir: REPO_DIR,
      scratchDir,
      upstream,
      storeEnv: stores.env,
      probe: (apiUrl, key, model, streamed) => ({
        url: `${apiUrl}/v1/chat/completions`,
        body: requestBody(model, streamed),
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      }),
      setUp: async (gateway) => {
        const accountId = await gateway.operator.createAccount(CREDIT_USD)
        return gateway.operator.createKey(accountId)
      },
    })
    profiles.push(profile)
    progress(
      `profile ${stream ? 'streaming' : 'non-streaming'}: ${Math.round(profile.rps)} requests/s`,
    )
  }
  return [
    '# Gateway CPU per request, by stage',
    '',
    `${machine.cpu}, ${machine.cores} cores, Bun ${machine.bun}; ${await gatewayRevision(REPO_DIR)}; ${tool.label}.`,
    `Stores: ${stores.database}; ${stores.admission}. 64 connections, zero-delay upstream,`,
    `${options.warmupS} s warm-up, ${options.durationS} s measured per column, a fresh gateway per column.`,
    '',
    renderProfile(profiles),
    '',
  ].join('\n')
}

async function main(): Promise<number> {
  const options = parseOptions(Bun.argv.slice(2))
  if (!options) {
    console.log(usage)
    return 0
  }
  if (options.workers > 1 && !(process.env.DATABASE_URL && process.env.REDIS_URL)) {
    throw new UsageError(
      '--workers above 1 needs DATABASE_URL and REDIS_URL: the embedded stores belong to one process.',
    )
  }
  cleanUpOnSignals()
  const scratchDir = await mkdtemp(join(tmpdir(), 'gateway-bench-'))
  let ok = false
  cleanup.add('remove scratch directory', async () => {
    if (ok) await rm(scratchDir, { recursive: true, force: true })
    else progress(`logs kept in ${scratchDir}`)
  })
  try {
    const markdown = options.perf
      ? await perfRun({
          options,
          scratchDir,
          repoDir: REPO_DIR,
          creditUsd: CREDIT_USD,
          requestBody,
          progress,
        })
      : options.profile
        ? await profileRun(options, scratchDir)
        : await benchmark(options, scratchDir)
    console.log(markdown)
    if (options.out) {
      await Bun.write(options.out, markdown)
      progress(`report written to ${options.out}`)
    }
    ok = true
    return 0
  } finally {
    await cleanup.run()
  }
}

runCommand(main, usage)
