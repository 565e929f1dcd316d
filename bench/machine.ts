/** The machine a benchmark ran on and the code it ran, for the report. */
import { cpus, release, totalmem } from 'node:os'
import { capture } from './processes.ts'
import { machineCpu, procText } from './proc.ts'

export type Machine = { cpu: string; cores: number; memoryGb: number; kernel: string; bun: string }

/** CPU model, core count, memory, kernel and Bun version. */
export async function describeMachine(): Promise<Machine> {
  let cpu = cpus()[0]?.model ?? 'unknown CPU'
  const model = /^model name\s*:\s*(.+)$/m.exec((await procText('/proc/cpuinfo')) ?? '')?.[1]
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
  const before = await machineCpu()
  await Bun.sleep(ms)
  const after = await machineCpu()
  if (!before || !after || after.total === before.total) return undefined
  return (after.busy - before.busy) / (after.total - before.total)
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
