// The tree is formatted (Biome, biome.json: width 100, single quotes, no semicolons). `bun run format`
// writes the formatting; this test fails on any file that differs from it and names the file.
import { expect, test } from 'bun:test'
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
