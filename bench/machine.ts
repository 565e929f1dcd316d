/** The machine a benchmark ran on, for the report. */
import { cpus, release, totalmem } from 'node:os'

export type Machine = { cpu: string; cores: number; memoryGb: number; kernel: string; bun: string }

export async function describeMachine(): Promise<Machine> {
  let cpu = cpus()[0]?.model ?? 'unknown CPU'
  const cpuinfo = Bun.file('/proc/cpuinfo')
  if (await cpuinfo.exists()) {
    const model = /^model name\s*:\s*(.+)$/m.exec(await cpuinfo.text())?.[1]
    if (model) cpu = model.trim()
  }
  return {
    cpu,
    cores: navigator.hardwareConcurrency || cpus().length,
    memoryGb: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    kernel: `${process.platform} ${release()}`,
    bun: Bun.version,
  }
}
