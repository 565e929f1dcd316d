/** The machine a benchmark ran on and the code it ran, for the report. */
import { readFile } from 'node:fs/promises'
import { cpus, release, totalmem } from 'node:os'
import { capture } from './processes.ts'

/** A /proc file's text (Bun.file sees them as empty: their size is 0), or undefined where there is none. */
async function proc(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8')
  } catch {
    return undefined
  }
}

export type Machine = { cpu: string; cores: number; memoryGb: number; kernel: string; bun: string }

/** CPU model, core count, memory, kernel and Bun version. */
export async function describeMachine(): Promise<Machine> {
  let cpu = cpus()[0]?.model ?? 'unknown CPU'
  const model = /^model name\s*:\s*(.+)$/m.exec((await proc('/proc/cpuinfo')) ?? '')?.[1]
  if (model) cpu = model.trim()
  return {
    cpu,
    cores: navigator.hardwareConcurrency || cpus().length,
    memoryGb: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    kernel: `${process.platform} ${release()}`,
    bun: Bun.version,
  }
}

/** The fraction of CPU time the whole machine spent busy over `ms` milliseconds (undefined without /proc/stat). */
export async function machineBusy(ms = 1000): Promise<number | undefined> {
  const sample = async () => {
    const stat = await proc('/proc/stat')
    if (!stat) return undefined
    const fields = stat.split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
    const idle = (fields[3] ?? 0) + (fields[4] ?? 0)
    return { idle, total: fields.reduce((sum, value) => sum + value, 0) }
  }
  const before = await sample()
  await Bun.sleep(ms)
  const after = await sample()
  if (!before || !after || after.total === before.total) return undefined
  return 1 - (after.idle - before.idle) / (after.total - before.total)
}

/** The commit the gateway ran from, and whether its code had uncommitted changes. */
export async function gatewayRevision(repoDir: string): Promise<string> {
  const head = await capture(['git', '-C', repoDir, 'rev-parse', '--short', 'HEAD'])
  if (head.exitCode !== 0) return 'unknown (not a git checkout)'
  const dirty = await capture([
    'git',
    '-C',
    repoDir,
    'status',
    '--porcelain',
    '--',
    'proxy',
    'shared',
    'sql',
    'package.json',
    'bun.lock',
  ])
  return `commit ${head.stdout.trim()}${dirty.stdout.trim() ? ' with uncommitted changes' : ''}`
}
