/**
 * Readings of Linux /proc for the benchmarks: CPU seconds of a process and of each of its threads, of
 * every process with a given command name, of the whole machine, and a process's memory fields.
 */
import { readdir, readFile } from 'node:fs/promises'

/** Kernel clock ticks per second (`getconf CLK_TCK`; 100 on Linux). */
const TICKS_PER_S = 100

/** A /proc file's text (Bun.file sees them as empty: their size is 0), or undefined where there is none. */
export async function procText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8')
  } catch {
    return undefined
  }
}

/** The command name and CPU seconds (user and system) of a `stat` file's text. */
export function parseStat(stat: string): { name: string; seconds: number } | undefined {
  const open = stat.indexOf('(')
  const close = stat.lastIndexOf(')')
  if (open < 0 || close < 0) return undefined
  // The name may hold spaces and parentheses; the fields after it start at the state (field 3), so
  // utime and stime (fields 14 and 15) are the 12th and 13th.
  const fields = stat
    .slice(close + 2)
    .trim()
    .split(/\s+/)
  const ticks = Number(fields[11]) + Number(fields[12])
  return { name: stat.slice(open + 1, close), seconds: ticks / TICKS_PER_S }
}

/** CPU seconds of one process's threads, by thread name (the main thread as "main"). */
export async function threadCpu(pid: number): Promise<Map<string, number>> {
  const byName = new Map<string, number>()
  const tids = await readdir(`/proc/${pid}/task`).catch(() => [] as string[])
  for (const tid of tids) {
    const parsed = parseStat((await procText(`/proc/${pid}/task/${tid}/stat`)) ?? '')
    if (!parsed) continue
    const name = tid === String(pid) ? 'main' : parsed.name.replace(/\s*\d+$/, '')
    byName.set(name, (byName.get(name) ?? 0) + parsed.seconds)
  }
  return byName
}

/** CPU seconds of every process with one of these command names (all PostgreSQL backends, say). */
export async function cpuOfCommands(names: string[]): Promise<number> {
  let seconds = 0
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const parsed = parseStat((await procText(`/proc/${entry}/stat`)) ?? '')
    if (parsed && names.includes(parsed.name)) seconds += parsed.seconds
  }
  return seconds
}

/** VmRSS, VmHWM (in kB) and CPU seconds of a process; throws when it is gone. */
export async function processMemory(
  pid: number,
): Promise<{ rssKb: number; peakRssKb: number; cpuS: number }> {
  const [status, stat] = await Promise.all([
    readFile(`/proc/${pid}/status`, 'utf8'),
    readFile(`/proc/${pid}/stat`, 'utf8'),
  ])
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1])
  return { rssKb: field('VmRSS'), peakRssKb: field('VmHWM'), cpuS: parseStat(stat)?.seconds ?? 0 }
}

/** The whole machine's busy and total CPU ticks since boot (undefined without /proc/stat). */
export async function machineCpu(): Promise<{ busy: number; total: number } | undefined> {
  const stat = await procText('/proc/stat')
  if (!stat) return undefined
  const fields = stat.split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
  const total = fields.reduce((sum, value) => sum + value, 0)
  return { busy: total - (fields[3] ?? 0) - (fields[4] ?? 0), total }
}
