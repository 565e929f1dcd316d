/**
 * Per-address request limits (catalog reads; later invalid keys): fixed one-minute windows counted in
 * Redis when it is configured, so the limit holds across processes, else in this process. These limits
 * protect the service and cannot be raised per account.
 */
import type Redis from 'ioredis'
import { withScripts, type ScriptCommands } from './admission/scripts.ts'
import { redisKeys } from './admission/redis-keys.ts'

export type AddressDecision = { ok: true } | { ok: false; retryAfterMs: number }

export interface AddressLimiter {
  hit(scope: string, address: string, limitPerWindow: number): Promise<AddressDecision>
}

export const ADDRESS_WINDOW_MS = 60_000

export class MemoryAddressLimiter implements AddressLimiter {
  private readonly windows = new Map<string, { count: number; endsAt: number }>()

  async hit(scope: string, address: string, limit: number): Promise<AddressDecision> {
    const now = Date.now()
    const key = `${scope}:${address}`
    let window = this.windows.get(key)
    if (!window || window.endsAt <= now) {
      if (this.windows.size > 100_000) this.prune(now)
      window = { count: 0, endsAt: now + ADDRESS_WINDOW_MS }
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
  private constructor(private readonly redis: Redis & ScriptCommands) {}

  static async create(redis: Redis): Promise<RedisAddressLimiter> {
    return new RedisAddressLimiter(await withScripts(redis))
  }

  async hit(scope: string, address: string, limit: number): Promise<AddressDecision> {
    const [count, remainingMs] = await this.redis.gwAddressHit(redisKeys.addressWindow(scope, address), ADDRESS_WINDOW_MS)
    return count > limit ? { ok: false, retryAfterMs: Math.max(1, remainingMs) } : { ok: true }
  }
}
