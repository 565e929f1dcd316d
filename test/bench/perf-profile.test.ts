import { describe, expect, test } from 'bun:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { functionName, jitLookup, readJitDumps } from '../../bench/jit-dump.ts'
import { attribute, parseScript } from '../../bench/perf-profile.ts'

/** A jitdump file (perf's format): a 40-byte header, then one JIT_CODE_LOAD record per code. */
function jitDump(codes: { start: number; size: number; name: string; at: number }[]): Uint8Array {
  const encoder = new TextEncoder()
  const records = codes.map((code) => {
    const name = encoder.encode(`${code.name}\0`)
    const record = new Uint8Array(56 + name.length)
    const view = new DataView(record.buffer)
    view.setUint32(0, 0, true) // JIT_CODE_LOAD
    view.setUint32(4, record.length, true)
    view.setBigUint64(8, BigInt(code.at), true)
    view.setBigUint64(24, BigInt(code.start), true) // vma
    view.setBigUint64(32, BigInt(code.start), true)
    view.setBigUint64(40, BigInt(code.size), true)
    record.set(name, 56)
    return record
  })
  const header = new Uint8Array(40)
  const view = new DataView(header.buffer)
  view.setUint32(0, 0x4a695444, true)
  view.setUint32(4, 1, true)
  view.setUint32(8, 40, true)
  const file = new Uint8Array(40 + records.reduce((sum, record) => sum + record.length, 0))
  file.set(header)
  let offset = 40
  for (const record of records) {
    file.set(record, offset)
    offset += record.length
  }
  return file
}

describe('bench --perf: reading perf samples', () => {
  test('a JIT address names the code loaded there last before the sample, not code loaded later', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'jit-dump-'))
    try {
      await Bun.write(
        join(dir, 'jit-1-1.dump'),
        jitDump([
          { start: 0x1000, size: 0x100, name: 'JSC-Baseline: attempt#AAAAAA', at: 100 },
          { start: 0x1000, size: 0x80, name: 'JSC-FTL: decode#BBBBBB', at: 300 },
          { start: 0x2000, size: 0x40, name: 'JSC-Thunk: CallTrampoline', at: 100 },
        ]),
      )
      const lookup = jitLookup(await readJitDumps(dir))
      expect(lookup(0x1010, 200)).toBe('JSC-Baseline: attempt#AAAAAA')
      expect(lookup(0x1010, 400)).toBe('JSC-FTL: decode#BBBBBB')
      // Past the newer, shorter code the older one is still there.
      expect(lookup(0x10f0, 400)).toBe('JSC-Baseline: attempt#AAAAAA')
      expect(lookup(0x1100, 400)).toBeUndefined()
      expect(lookup(0x1010, 50)).toBeUndefined()
      expect(functionName('JSC-FTL: decode#BBBBBB')).toBe('decode')
      expect(functionName('JSC-DFG: #CCCCCC')).toBe('(anonymous)')
      expect(functionName('JSC-Thunk: CallTrampoline')).toBeUndefined()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  test('each sample counts for its innermost JavaScript function, else the kernel or native code', () => {
    const script = [
      '  1000.000001: ',
      '\t    ffffffff81000000 ([kernel.kallsyms])',
      '\t         1a44ff1 (/usr/bin/bun)',
      '\t            2010 (/tmp/perf-7.map)',
      '\t            1010 (/tmp/perf-7.map)',
      '',
      '  1000.000002: ',
      '\t    ffffffff81000000 ([kernel.kallsyms])',
      '\t         1a44ff1 (/usr/bin/bun)',
      '',
      '  1000.000003: ',
      '\t         1a44ff1 (/usr/bin/bun)',
      '',
      '  1000.000004: ',
      '\t            1020 (/tmp/perf-7.map)',
      '',
    ].join('\n')
    const samples = parseScript(script)
    expect(samples.map((sample) => sample.frames.length)).toEqual([4, 2, 1, 1])
    expect(samples[0]!.at).toBe(1_000_000_001_000)
    const names: Record<number, string> = {
      0x1010: 'JSC-FTL: attempt#AAAAAA',
      0x1020: 'JSC-FTL: attempt#AAAAAA',
      0x2010: 'JSC-Thunk: CallTrampoline',
    }
    const counted = attribute(samples, (address) => names[address])
    expect(counted).toEqual({
      samples: 4,
      kernel: 1,
      native: 1,
      script: 2,
      functions: new Map([['attempt', 2]]),
    })
  })
})
