/**
 * Every Lua script of the service, in one registry: each Redis command, the files in `lua/` it is made
 * of, and its number of keys, defined on a client with ioredis `defineCommand` (EVALSHA, loading the
 * script on first use). The admission decisions share the prelude `lib.lua`; each file opens with its
 * purpose, KEYS, ARGV and what it returns. Every key a script touches carries one account's hash tag, or
 * is a single key, so the scripts run unchanged on Redis Cluster.
 */
import type { RedisClient } from '../redis-client.ts'
import { join } from 'node:path'
import type { AccountLimits, KeyLimits } from '../../core/key-record.ts'
import type { Reply } from './redis-replies.ts'

export type ScriptCommands = {
  gwDecide(...args: (string | number)[]): Promise<Reply[]>
  gwSweep(...args: (string | number)[]): Promise<[string[], number]>
  gwExtend(...args: (string | number)[]): Promise<number>
  gwCredit(...args: (string | number)[]): Promise<Reply>
  gwSeed(...args: (string | number)[]): Promise<string>
  /** One request from an address in its fixed window: [count, remaining ms]. */
  gwAddressHit(key: string, windowMs: number): Promise<[number, number]>
  /** Deletes a lock only if it still holds the caller's token: 1 released, 0 not the caller's. */
  gwReleaseLock(key: string, token: string): Promise<number>
}

const scripts: Record<keyof ScriptCommands, { files: string[]; keys: number }> = {
  gwDecide: {
    files: ['lib.lua', 'admit.lua', 'settle.lua', 'release.lua', 'lease.lua', 'decide.lua'],
    keys: 3,
  },
  gwSweep: { files: ['lib.lua', 'sweep.lua'], keys: 2 },
  gwExtend: { files: ['lib.lua', 'extend.lua'], keys: 1 },
  gwCredit: { files: ['lib.lua', 'credit.lua'], keys: 2 },
  gwSeed: { files: ['lib.lua', 'seed.lua'], keys: 2 },
  gwAddressHit: { files: ['address-hit.lua'], keys: 1 },
  gwReleaseLock: { files: ['release-lock.lua'], keys: 1 },
}

let sources: Promise<Map<string, string>> | undefined

/** The scripts' text, read once per process. */
function loadSources(): Promise<Map<string, string>> {
  sources ??= (async () => {
    const dir = join(import.meta.dir, 'lua')
    const files = [...new Set(Object.values(scripts).flatMap((script) => script.files))]
    return new Map(
      await Promise.all(
        files.map(async (file) => [file, await Bun.file(join(dir, file)).text()] as const),
      ),
    )
  })()
  return sources
}

/** The client with every script command defined on it. */
export async function withScripts<C extends RedisClient>(client: C): Promise<C & ScriptCommands> {
  const text = await loadSources()
  for (const [name, { files, keys }] of Object.entries(scripts)) {
    client.defineCommand(name, {
      numberOfKeys: keys,
      lua: files.map((file) => text.get(file)!).join('\n'),
    })
  }
  return client as C & ScriptCommands
}

/** A key's and its account's limits in the order the scripts read them (admit.lua, lease.lua). */
export function limitArguments(key: KeyLimits, account: AccountLimits): number[] {
  return [
    key.rpm,
    key.tpm,
    key.concurrency,
    key.dailyNano,
    key.monthlyNano,
    account.rpm,
    account.tpm,
    account.concurrency,
  ]
}
