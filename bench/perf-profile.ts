/**
 * The main thread's CPU per request, the bare proxy's against the gateway's, from
 * Linux `perf` rather than Bun's profiler. Bun's profiler sees JavaScript only; here every sample of the
 * main thread counts, and each is put where its cost belongs: the kernel or native code with no
 * JavaScript on the stack (the event loop, the HTTP server, socket work), or the innermost JavaScript
 * function on the stack, together with the native code it called (fetch, Response, JSON.parse). The
 * gateway runs with JavaScriptCore's JIT dump on, which names its compiled functions.
 */
import { functionName, jitLookup, readJitDumps } from './jit-dump.ts'
import { capture } from './processes.ts'

/** perf's sampling frequency, per second. */
export const SAMPLE_HZ = 999
/** Innermost JavaScript functions listed per column. */
const TOP_FUNCTIONS = 14

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

export type Sample = { at: number; frames: { address: number; object: string }[] }

/** `perf script -F time,ip,dso`: a time line, then one frame per line (innermost first), then a blank. */
export function parseScript(text: string): Sample[] {
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

/** Samples counted by where their cost belongs. */
export type Attribution = {
  samples: number
  kernel: number
  native: number
  script: number
  /** Innermost JavaScript function → samples. */
  functions: Map<string, number>
}

/**
 * Each sample goes to the innermost JavaScript function on its stack (with the native code it called);
 * a sample with none goes to the kernel or to native code, by its innermost frame.
 */
export function attribute(
  samples: Sample[],
  lookup: (address: number, at: number) => string | undefined,
): Attribution {
  const counted: Attribution = {
    samples: samples.length,
    kernel: 0,
    native: 0,
    script: 0,
    functions: new Map(),
  }
  for (const sample of samples) {
    let innermost: string | undefined
    for (const frame of sample.frames) {
      const jit = lookup(frame.address, sample.at)
      innermost = jit && functionName(jit)
      if (innermost) break
    }
    if (innermost) {
      counted.script += 1
      counted.functions.set(innermost, (counted.functions.get(innermost) ?? 0) + 1)
    } else if (sample.frames[0]?.object.includes('kernel')) counted.kernel += 1
    else counted.native += 1
  }
  return counted
}

/** Attributes the samples of `file` (perf record of `seconds` at `rps`) and turns them into µs per request. */
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
  const lookup = jitLookup(options.jitDir ? await readJitDumps(options.jitDir) : [])
  const counted = attribute(parseScript(printed.stdout), lookup)
  const usPerSample = 1e6 / SAMPLE_HZ / (options.rps * options.seconds)
  return {
    target: options.target,
    stream: options.stream,
    rps: options.rps,
    totalUs: counted.samples * usPerSample,
    kernelUs: counted.kernel * usPerSample,
    nativeUs: counted.native * usPerSample,
    scriptUs: counted.script * usPerSample,
    functions: [...counted.functions]
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP_FUNCTIONS)
      .map(([name, count]) => [name, count * usPerSample]),
  }
}

/** µs with one decimal. */
export const us = (value: number) => value.toFixed(1)

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
