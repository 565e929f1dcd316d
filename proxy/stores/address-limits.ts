/**
 * Per-address request limits (catalog reads, invalid keys, sign-in attempts, accountless setups): fixed
 * windows (a minute unless a limit says otherwise) counted in Redis when it is configured, so the limit
 * holds across processes, else in this process. These limits protect the service and cannot be raised
 * per account. An IPv6 client is counted by its /64 network: one host is given a whole /64 and may use any
 * address in it.
 */
import type { RedisClient } from './redis-client.ts'
import { withScripts, type ScriptCommands } from './admission/scripts.ts'
import { redisKeys } from './admission/redis-keys.ts'

export type AddressDecision = { ok: true } | { ok: false; retryAfterMs: number }

export interface AddressLimiter {
  hit(
    scope: string,
    address: string,
    limitPerWindow: number,
    windowMs?: number,
  ): Promise<AddressDecision>
}

export const ADDRESS_WINDOW_MS = 60_000

/**
 * What one address is counted as: an IPv4 address as it is (also when written IPv4-mapped,
 * `::ffff:192.0.2.1`), an IPv6 address as its /64 (`2001:db8:1:2::/64`); anything else as given.
 */
export function addressBucket(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address)
  if (mapped) return mapped[1]!
  if (!address.includes(':') || address.split('::').length > 2) return address
  const [head = '', tail] = address.split('%')[0]!.toLowerCase().split('::')
  const front = head ? head.split(':') : []
  const back = tail === undefined ? [] : tail ? tail.split(':') : []
  const groups =
    tail === undefined
      ? front
      : [...front, ...Array(8 - front.length - back.length).fill('0'), ...back]
  if (groups.length !== 8 || !groups.every((group) => /^[0-9a-f]{1,4}$/.test(group))) return address
  return `${groups
    .slice(0, 4)
    .map((group) => group.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`
}

export class MemoryAddressLimiter implements AddressLimiter {
  private readonly windows = new Map<string, { count: number; endsAt: number }>()

  async hit(
    scope: string,
    address: string,
    limit: number,
    windowMs = ADDRESS_WINDOW_MS,
  ): Promise<AddressDecision> {
    const now = Date.now()
    const key = `${scope}:${addressBucket(address)}`
    let window = this.windows.get(key)
    if (!window || window.endsAt <= now) {
      if (this.windows.size > 100_000) this.prune(now)
      window = { count: 0, endsAt: now + windowMs }
      this.windows.set(key, window)
    }
    window.count += 1
    return window.count > limit ? { ok: false, retryAfterMs: window.endsAt - now } : { ok: true }
  }

  private prune(now: number): void {
    for (const [key, window] of this.windows) if (window.endsAt <= now) this.windows.delete(key)
  }
}

export class RedisAddressLimiter implements AddressLimiter {
  private constructor(private readonly redis: RedisClient & ScriptCommands) {}

  static async create(redis: RedisClient): Promise<RedisAddressLimiter> {
    return new RedisAddressLimiter(await withScripts(redis))
  }

  async hit(
    scope: string,
    address: string,
    limit: number,
    windowMs = ADDRESS_WINDOW_MS,
  ): Promise<AddressDecision> {
    const [count, remainingMs] = await this.redis.gwAddressHit(
      redisKeys.addressWindow(scope, addressBucket(address)),
      windowMs,
    )
    return count > limit ? { ok: false, retryAfterMs: Math.max(1, remainingMs) } : { ok: true }
  }
}
