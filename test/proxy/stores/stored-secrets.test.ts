// Secrets kept under DATA_DIR when their setting is empty (operator token, bot-check key, push key pair):
// the configured value wins and nothing is written; otherwise one is made at first start (mode 0600) and
// read back at every later start; processes starting together on one DATA_DIR agree on one.
import { afterEach, expect, test } from 'bun:test'
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { STORED_SECRETS, storedSecretPath } from '../../../proxy/stores/stored-secrets.ts'
import { resolveAltchaKey } from '../../../proxy/accounts/people/altcha-key.ts'
import { resolveOperatorToken } from '../../../proxy/ops/operator-token.ts'

const dirs: string[] = []
async function dataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'stored-secret-'))
  dirs.push(dir)
  return join(dir, 'data')
}
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

const secrets = [
  { name: 'operatorToken', resolve: resolveOperatorToken },
  { name: 'altchaKey', resolve: resolveAltchaKey },
] as const

for (const { name, resolve } of secrets) {
  test(`${name}: the configured value wins and nothing is written`, async () => {
    const dir = await dataDir()
    expect(await resolve('configured-secret', dir)).toBe('configured-secret')
    expect(await Bun.file(storedSecretPath(dir, name)).exists()).toBe(false)
  })

  test(`${name}: made at first start (mode 0600), the same at every later start`, async () => {
    const dir = await dataDir()
    const first = await resolve('', dir)
    expect(first.length).toBeGreaterThanOrEqual(32)
    expect((await stat(storedSecretPath(dir, name))).mode & 0o777).toBe(0o600)
    expect(await resolve('', dir)).toBe(first)
  })

  test(`${name}: processes starting together on one DATA_DIR agree on one, and leave no drafts`, async () => {
    const dir = await dataDir()
    const module = join(
      import.meta.dir,
      '..',
      '..',
      '..',
      'proxy',
      ...(resolve === resolveAltchaKey
        ? ['accounts', 'people', 'altcha-key.ts']
        : ['ops', 'operator-token.ts']),
    )
    const script = `const { ${resolve.name} } = await import(${JSON.stringify(module)}); console.log(await ${resolve.name}('', ${JSON.stringify(dir)}))`
    const starts = Array.from({ length: 4 }, () =>
      Bun.spawn(['bun', '-e', script], { stdout: 'pipe', stderr: 'inherit' }),
    )
    const values = await Promise.all(starts.map((child) => new Response(child.stdout).text()))
    expect(new Set(values.map((value) => value.trim())).size).toBe(1)
    expect(values[0]!.trim().length).toBeGreaterThanOrEqual(32)
    expect(await readdir(dir)).toEqual([STORED_SECRETS[name]])
  })
}
