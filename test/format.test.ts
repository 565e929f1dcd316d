// The tree is formatted (Biome, biome.json: width 100, single quotes, no semicolons). `bun run format`
// writes the formatting; this test fails on any file that differs from it and names the file.
// Tests also keep one convention the formatter cannot: no `expect(promise).resolves` / `.rejects`
// (see test/helpers/settle.ts for why).
import { expect, test } from 'bun:test'
import { Glob } from 'bun'
import { join } from 'node:path'

const root = join(import.meta.dir, '..')

test('every source file is formatted', async () => {
  const biome = join(root, 'node_modules', '.bin', 'biome')
  const check = Bun.spawn([biome, 'format', '--max-diagnostics=none', '--colors=off', '.'], {
    cwd: root,
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [out, err, exitCode] = await Promise.all([
    new Response(check.stdout).text(),
    new Response(check.stderr).text(),
    check.exited,
  ])
  const unformatted = [...`${out}\n${err}`.matchAll(/^(\S+) format /gm)].map((match) => match[1])
  expect({ exitCode, unformatted }).toEqual({ exitCode: 0, unformatted: [] })
})

test('no test waits with expect(promise).resolves or .rejects', async () => {
  const offenders: string[] = []
  for await (const path of new Glob('test/**/*.{ts,tsx}').scan(root)) {
    const text = await Bun.file(join(root, path)).text()
    text.split('\n').forEach((line, index) => {
      if (/\)\s*\.(resolves|rejects)\./.test(line) || /^\s*\.(resolves|rejects)\./.test(line))
        offenders.push(`${path}:${index + 1}`)
    })
  }
  expect(offenders).toEqual([])
})
