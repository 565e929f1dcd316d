/**
 * JavaScriptCore's JIT dump (the jitdump format of Linux perf): which function's compiled code was at an
 * address, and from when. A Bun process writes it with `BUN_JSC_useJITDump`.
 */
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'

const decoder = new TextDecoder()

/** One JIT-compiled function: where its code was and from when (monotonic ns, as perf's -k 1 clock). */
export type JitCode = { start: number; end: number; name: string; at: number }

/** The environment that makes a Bun process write its JIT dump into `dir`. */
export function jitDumpEnv(dir: string): Record<string, string> {
  return { BUN_JSC_useJITDump: '1', BUN_JSC_jitDumpDirectory: dir }
}

/** Reads the JIT_CODE_LOAD records of every dump in `dir` (the jitdump format of Linux perf). */
export async function readJitDumps(dir: string): Promise<JitCode[]> {
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
        const name = decoder.decode(bytes.subarray(nameStart, nameEnd))
        codes.push({ start, end: start + length, name, at })
      }
      offset += size
    }
  }
  return codes.sort((a, b) => a.start - b.start)
}

/** Finds the code at `address` as it was at `at`: JIT memory is reused, so the latest load before then. */
export function jitLookup(codes: JitCode[]): (address: number, at: number) => string | undefined {
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
export function functionName(jitName: string): string | undefined {
  if (/Thunk|InlineCache/.test(jitName)) return undefined
  const name = jitName.replace(/^JSC-[A-Za-z]+: /, '').replace(/#.*$/, '')
  return name || '(anonymous)'
}
