// The bot-check signing key: the configured one, or one generated once under DATA_DIR and kept.
import { afterEach, expect, test } from 'bun:test'
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { altchaKeyPath, resolveAltchaKey } from '../../../proxy/people/altcha-key.ts'

const dirs: string[] = []
async function dataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'altcha-key-'))
  dirs.push(dir)
  return join(dir, 'data')
}
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

test('the configured key wins and nothing is written', async () => {
  const dir = await dataDir()
  expect(await resolveAltchaKey('configured-secret', dir)).toBe('configured-secret')
  expect(await Bun.file(altchaKeyPath(dir)).exists()).toBe(false)
})

test('without one, a key is generated at first start (mode 0600) and the same key is read at every later start', async () => {
  const dir = await dataDir()
  const first = await resolveAltchaKey('', dir)
  expect(first.length).toBeGreaterThanOrEqual(43)
  expect((await stat(altchaKeyPath(dir))).mode & 0o777).toBe(0o600)
  expect(await resolveAltchaKey('', dir)).toBe(first)
})

test('processes starting together on one DATA_DIR agree on one key', async () => {
  const dir = await dataDir()
  const keys = await Promise.all([1, 2, 3, 4, 5].map(() => resolveAltchaKey('', dir)))
  expect(new Set(keys).size).toBe(1)
})
