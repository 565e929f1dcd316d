// The Lua scripts: every file in the scripts folder belongs to a registered command, each opens with its
// header (purpose, KEYS, ARGV, what it returns), and every command is defined on a real Redis.
import { expect, test } from 'bun:test'
import Redis from 'ioredis'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import calculateSlot from 'cluster-key-slot'
import { redisKeys } from '../../../../proxy/stores/admission/redis-keys.ts'
import { withScripts } from '../../../../proxy/stores/admission/scripts.ts'
import { describeWith, redisUrl } from '../../../helpers/services.ts'

const dir = join(import.meta.dir, '..', '..', '..', '..', 'proxy', 'stores', 'admission', 'lua')
const files = readdirSync(dir).filter((file) => file.endsWith('.lua'))

test('each script file opens with its purpose, the KEYS it reads, and what it returns', async () => {
  for (const file of files) {
    const text = await Bun.file(join(dir, file)).text()
    const header = /^--\[\[([\s\S]*?)\]\]/.exec(text)?.[1]
    expect({ file, header: header !== undefined }).toEqual({ file, header: true })
    // The shared prelude returns nothing; the decisions decide.lua runs take their keys as arguments.
    if (file === 'lib.lua') continue
    const parts = ['Returns', ...(text.slice(header!.length).includes('KEYS[') ? ['KEYS[1]'] : [])]
    for (const part of parts)
      expect({ file, part, found: header!.includes(part) }).toEqual({ file, part, found: true })
  }
})

describeWith('redis', 'script registry', () => {
  test('every file is part of a command, and every command loads on Redis', async () => {
    const redis = new Redis(redisUrl!, { lazyConnect: true })
    try {
      const client = await withScripts(redis)
      const defined = Object.keys(
        (client as unknown as { scriptsSet: Record<string, { lua: string }> }).scriptsSet,
      )
      const used = new Set<string>()
      for (const name of defined) {
        const lua = (client as unknown as { scriptsSet: Record<string, { lua: string }> })
          .scriptsSet[name]!.lua
        for (const file of files)
          if (lua.includes((await Bun.file(join(dir, file)).text()).trim())) used.add(file)
        // SCRIPT LOAD compiles the script: a syntax error fails here.
        expect(await redis.script('LOAD', lua)).toMatch(/^[0-9a-f]{40}$/)
      }
      expect([...used].sort()).toEqual([...files].sort())
    } finally {
      redis.disconnect()
    }
  })
})

test("every key of one account is in one cluster slot, whatever the prefix, so no script's keys span two", () => {
  const perAccount = Object.entries(redisKeys).filter(
    ([, key]) => typeof key === 'function' && key.length === 1 && key.name !== 'addressWindow',
  ) as [string, (accountId: string) => string][]
  expect(perAccount.map(([name]) => name).sort()).toEqual(
    ['credits', 'freeChatLock', 'holds', 'outbox', 'state'].sort(),
  )
  for (const prefix of ['', 'gateway:', 'test:abc{x}:']) {
    for (let i = 0; i < 200; i++) {
      const accountId = `acct_${crypto.randomUUID().replaceAll('-', '').slice(0, 16)}`
      const slots = new Set(perAccount.map(([, key]) => calculateSlot(prefix + key(accountId))))
      expect({ prefix, accountId, slots: slots.size }).toEqual({ prefix, accountId, slots: 1 })
    }
  }
})
