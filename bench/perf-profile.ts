/**
 * `bun run bench --perf`: the main thread's CPU per request, the bare proxy's against the gateway's, from
 * Linux `perf` rather than Bun's profiler. Bun's profiler sees JavaScript only; here every sample of the
 * main thread counts, and each is put where its cost belongs: the kernel or native code with no
 * JavaScript on the stack (the event loop, the HTTP server, socket work), or the innermost JavaScript
 * function on the stack, together with the native code it called (fetch, Response, JSON.parse). The
 * gateway runs with JavaScriptCore's JIT dump on, which names its compiled functions.
 */
import { mkdir, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { benchModels, startGateway } from './gateway.ts'
import { describeMachine, gatewayRevision } from './machine.ts'
import type { BenchOptions } from './options.ts'
import { capture, startService } from './processes.ts'
import { prepareStores } from './stores.ts'
import { loadTool } from './wrk.ts'

/** perf's sampling frequency, per second. */
const SAMPLE_HZ = 999
/** Innermost JavaScript functions listed per column. */
const TOP_FUNCTIONS = 14

/** One JIT-compiled function: where its code was and from when (monotonic ns, as perf's -k 1 clock). */
type JitCode = { start: number; end: number; name: string; at: number }

export type MainThreadProfile = {
  target: string
  stream: boolean
  rps: number
  /** Main-thread CPU per request (µs), in all and by where it went. */
  totalUs: number
  kernelUs: number
  nativeUs: number
  scriptUs: number
  /** Innermost JavaScript function (with the native code it called) → µs per request. */
  functions: [string, number][]
}

/** The perf binary, or why there is none. */
export async function findPerf(): Promise<string> {
  const perf = Bun.which('perf')
  if (!perf) throw new Error('--perf needs Linux perf on PATH (Debian: apt-get install linux-perf)')
  const check = await capture([perf, 'record', '-o', '/dev/null', '--', 'true'])
  if (check.exitCode !== 0)
    throw new Error(`perf cannot record here: ${check.stderr.trim().split('\n')[0]}`)
  return perf
}

/** The environment that makes a Bun process write its JIT dump into `dir` (read by `profileOf`). */
export function jitDumpEnv(dir: string): Record<string, string> {
  return { BUN_JSC_useJITDump: '1', BUN_JSC_jitDumpDirectory: dir }
}

/** Samples the main thread of `pid` (its thread ID is the process ID) for `seconds`. */
export async function recordMainThread(
  perf: string,
  pid: number,
  seconds: number,
  file: string,
): Promise<void> {
  const printed = await capture([
    perf,
    'record',
    '-k',
    '1',
    '-g',
    '-F',
    String(SAMPLE_HZ),
    '-t',
    String(pid),
    '-o',
    file,
    '--',
    'sleep',
    String(seconds),
  ])
  if (printed.exitCode !== 0) throw new Error(`perf record failed: ${printed.stderr.trim()}`)
}

/** Reads the JIT_CODE_LOAD records of every dump in `dir` (the jitdump format of Linux perf). */
async function readJitDumps(dir: string): Promise<JitCode[]> {
  const codes: JitCode[] = []
  const files = (await readdir(dir).catch(() => [] as string[])).filter((name) =>
    name.endsWith('.dump'),
  )
  for (const name of files) {
    const bytes = new Uint8Array(await Bun.file(join(dir, name)).arrayBuffer())
    const view = new DataView(bytes.buffer)
    let offset = view.getUint32(8, true)
    while (offset + 16 <= bytes.length) {
      const id = view.getUint32(offset, true)
      const size = view.getUint32(offset + 4, true)
      if (size === 0 || offset + size > bytes.length) break
      if (id === 0) {
        const at = Number(view.getBigUint64(offset + 8, true))
        const start = Number(view.getBigUint64(offset + 32, true))
        const length = Number(view.getBigUint64(offset + 40, true))
        const nameStart = offset + 56
        const nameEnd = bytes.indexOf(0, nameStart)
        const name = new TextDecoder().decode(bytes.subarray(nameStart, nameEnd))
        codes.push({ start, end: start + length, name, at })
      }
      offset += size
    }
  }
  return codes.sort((a, b) => a.start - b.start)
}

/** Finds the code at `address` as it was at `at`: JIT memory is reused, so the latest load before then. */
function jitLookup(codes: JitCode[]): (address: number, at: number) => string | undefined {
  const longest = codes.reduce((most, code) => Math.max(most, code.end - code.start), 0)
  return (address, at) => {
    let low = 0
    let high = codes.length
    while (low < high) {
      const middle = (low + high) >> 1
      if (codes[middle]!.start <= address) low = middle + 1
      else high = middle
    }
    let best: JitCode | undefined
    for (let index = low - 1; index >= 0 && codes[index]!.start > address - longest; index--) {
      const code = codes[index]!
      if (address < code.end && code.at <= at && (!best || code.at > best.at)) best = code
    }
    return best?.name
  }
}

/** "JSC-FTL: attempt#BkZ9ur" → "attempt"; thunks and inline caches are glue, not functions. */
function functionName(jitName: string): string | undefined {
  if (/Thunk|InlineCache/.test(jitName)) return undefined
  const name = jitName.replace(/^JSC-[A-Za-z]+: /, '').replace(/#.*$/, '')
  return name || '(anonymous)'
}

type Sample = { at: number; frames: { address: number; object: string }[] }

/** `perf script -F time,ip,dso`: a time line, then one frame per line (innermost first), then a blank. */
function parseScript(text: string): Sample[] {
  const samples: Sample[] = []
  let current: Sample | undefined
  for (const line of text.split('\n')) {
    const time = /^\s*(\d+\.\d+):\s*$/.exec(line)
    if (time) {
      current = { at: Math.round(Number(time[1]) * 1e9), frames: [] }
      samples.push(current)
      continue
    }
    const frame = /^\s+([0-9a-f]+)\s+\((.*)\)\s*$/.exec(line)
    if (frame && current)
      current.frames.push({ address: Number.parseInt(frame[1]!, 16), object: frame[2]! })
  }
  return samples
}

/** Attributes the samples of `file` (perf record of `seconds` at `rps`) to where their cost belongs. */
export async function profileOf(options: {
  perf: string
  file: string
  jitDir: string | undefined
  target: string
  stream: boolean
  rps: number
  seconds: number
}): Promise<MainThreadProfile> {
  const printed = await capture([options.perf, 'script', '-F', 'time,ip,dso', '-i', options.file])
  const samples = parseScript(printed.stdout)
  const lookup = jitLookup(options.jitDir ? await readJitDumps(options.jitDir) : [])
  const usPerSample = 1e6 / SAMPLE_HZ / (options.rps * options.seconds)
  let kernel = 0
  let native = 0
  let script = 0
  const functions = new Map<string, number>()
  for (const sample of samples) {
    let innermost: string | undefined
    for (const frame of sample.frames) {
      const jit = lookup(frame.address, sample.at)
      const name = jit && functionName(jit)
      if (name) {
        innermost = name
        break
      }
    }
    if (innermost) {
      script += 1
      functions.set(innermost, (functions.get(innermost) ?? 0) + 1)
    } else if (sample.frames[0]?.object.includes('kernel')) kernel += 1
    else native += 1
  }
  return {
    target: options.target,
    stream: options.stream,
    rps: options.rps,
    totalUs: samples.length * usPerSample,
    kernelUs: kernel * usPerSample,
    nativeUs: native * usPerSample,
    scriptUs: script * usPerSample,
    functions: [...functions]
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP_FUNCTIONS)
      .map(([name, count]) => [name, count * usPerSample]),
  }
}

const us = (value: number) => value.toFixed(1)

/** The Markdown tables: one column per target and mode, then each gateway column's functions. */
export function renderPerfProfiles(profiles: MainThreadProfile[]): string {
  const label = (profile: MainThreadProfile) =>
    `${profile.target}, ${profile.stream ? 'streaming' : 'non-streaming'}`
  const row = (name: string, pick: (profile: MainThreadProfile) => string) =>
    `| ${name} | ${profiles.map(pick).join(' | ')} |`
  const lines = [
    `| Main thread, µs per request | ${profiles.map(label).join(' | ')} |`,
    `| --- | ${profiles.map(() => '---:').join(' | ')} |`,
    row('kernel, no JavaScript on the stack', (profile) => us(profile.kernelUs)),
    row('native code, no JavaScript on the stack', (profile) => us(profile.nativeUs)),
    row('JavaScript, with the native code it called', (profile) => us(profile.scriptUs)),
    row('**all**', (profile) => `**${us(profile.totalUs)}**`),
    row('requests per second (under perf)', (profile) =>
      Math.round(profile.rps).toLocaleString('en-US'),
    ),
  ]
  for (const profile of profiles) {
    if (profile.functions.length === 0) continue
    lines.push(
      '',
      `Innermost JavaScript functions, ${label(profile)} (µs per request, with the native code each called):`,
      '',
      '| Function | µs |',
      '| --- | ---: |',
      ...profile.functions.map(([name, value]) => `| \`${name}\` | ${us(value)} |`),
    )
  }
  return lines.join('\n')
}

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
