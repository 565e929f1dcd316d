/**
 * `bun run bench --perf`: the 64-connection zero-delay cell through the bare proxy and the gateway, with
 * perf sampling each one's main thread (perf-profile.ts says how the samples are read).
 */
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { benchModels, startGateway } from './gateway.ts'
import { jitDumpEnv } from './jit-dump.ts'
import { describeMachine, gatewayRevision } from './machine.ts'
import type { BenchOptions } from './options.ts'
import {
  findPerf,
  profileOf,
  recordMainThread,
  renderPerfProfiles,
  SAMPLE_HZ,
  type MainThreadProfile,
  us,
} from './perf-profile.ts'
import { startService } from './processes.ts'
import { prepareStores } from './stores.ts'
import { loadTool } from './wrk.ts'

/**
 * The 64-connection zero-delay cell, non-streaming and streaming, through the bare proxy and the
 * gateway in turn: a warm-up, then `durationS` of load with perf sampling the target's main thread.
 */
export async function perfRun(context: {
  options: BenchOptions
  scratchDir: string
  repoDir: string
  creditUsd: string
  requestBody: (model: string, stream: boolean) => string
  progress: (message: string) => void
}): Promise<string> {
  const { options, scratchDir } = context
  const perf = await findPerf()
  const [machine, tool] = await Promise.all([describeMachine(), loadTool(scratchDir)])
  const stores = await prepareStores(
    process.env.DATABASE_URL || undefined,
    process.env.REDIS_URL || undefined,
    String(Date.now()),
  )
  const jitDirs = { bare: join(scratchDir, 'jit-bare'), gateway: join(scratchDir, 'jit-gateway') }
  await Promise.all(Object.values(jitDirs).map((dir) => mkdir(dir, { recursive: true })))
  const upstream = await startService('fake-upstream', 'fake-upstream.ts', [], scratchDir)
  const bare = await startService(
    'bare-proxy',
    'bare-proxy.ts',
    [upstream.origin],
    scratchDir,
    jitDumpEnv(jitDirs.bare),
  )
  const gateway = await startGateway({
    repoDir: context.repoDir,
    scratchDir,
    upstreamOrigin: upstream.origin,
    storeEnv: stores.env,
    workers: 1,
    env: jitDumpEnv(jitDirs.gateway),
  })
  try {
    const key = await gateway.operator.createKey(
      await gateway.operator.createAccount(context.creditUsd),
    )
    const targets: {
      name: string
      pid: number
      jitDir: string
      url: string
      model: string
      headers: Record<string, string>
    }[] = [
      {
        name: 'bare proxy',
        pid: bare.pid,
        jitDir: jitDirs.bare,
        url: bare.origin,
        model: benchModels['bench/fast'],
        headers: {},
      },
      {
        name: 'gateway',
        pid: gateway.pid,
        jitDir: jitDirs.gateway,
        url: gateway.apiUrl,
        model: 'bench/fast',
        headers: { authorization: `Bearer ${key}` },
      },
    ]
    const profiles: MainThreadProfile[] = []
    for (const stream of [false, true]) {
      for (const target of targets) {
        const spec = {
          url: `${target.url}/v1/chat/completions`,
          body: context.requestBody(target.model, stream),
          headers: { 'content-type': 'application/json', ...target.headers },
          connections: 64,
        }
        if (options.warmupS > 0) await tool.run({ ...spec, durationS: options.warmupS })
        const file = join(
          scratchDir,
          `perf-${target.name.replace(' ', '-')}-${stream ? 'stream' : 'plain'}.data`,
        )
        // perf samples the middle of the load: it starts a second in and stops a second before the end.
        const [load] = await Promise.all([
          tool.run({ ...spec, durationS: options.durationS + 2 }),
          Bun.sleep(1_000).then(() => recordMainThread(perf, target.pid, options.durationS, file)),
        ])
        const profile = await profileOf({
          perf,
          file,
          jitDir: target.jitDir,
          target: target.name,
          stream,
          rps: load.rps,
          seconds: options.durationS,
        })
        profiles.push(profile)
        context.progress(
          `perf ${target.name}, ${stream ? 'streaming' : 'non-streaming'}: ${Math.round(load.rps)} requests/s, main thread ${us(profile.totalUs)} µs a request`,
        )
      }
    }
    return [
      '# Main-thread CPU per request (perf)',
      '',
      `${machine.cpu}, ${machine.cores} cores, Bun ${machine.bun}; ${await gatewayRevision(context.repoDir)}; ${tool.label}.`,
      `Gateway stores: ${stores.database}; ${stores.admission}. 64 connections, zero-delay upstream,`,
      `${options.warmupS} s warm-up, ${options.durationS} s sampled at ${SAMPLE_HZ} Hz per column.`,
      '',
      renderPerfProfiles(profiles),
      '',
    ].join('\n')
  } finally {
    await gateway.stop()
  }
}
