/**
 * One free chat request per account at a time (spec: a second one while the first is running or settling
 * is 409 request_in_progress). With Redis the lock is shared by every process (SET NX PX, released only by
 * its owner's token); without Redis there is one process, and the lock lives in it. The expiry only
 * bounds a lock whose process died: a request releases its lock when it ends.
 */
import type { RedisClient } from '../../stores/redis-client.ts'
import { withScripts, type ScriptCommands } from '../../stores/admission/scripts.ts'
import { redisKeys } from '../../stores/admission/redis-keys.ts'

export interface ChatLock {
  /** A token to release with, or undefined when the account's lock is held. */
  acquire(accountId: string, ttlMs: number): Promise<string | undefined>
  release(accountId: string, token: string): Promise<void>
}

export class MemoryChatLock implements ChatLock {
  private readonly held = new Map<string, { token: string; expiresAtMs: number }>()

  async acquire(accountId: string, ttlMs: number): Promise<string | undefined> {
    const now = Date.now()
    const current = this.held.get(accountId)
    if (current && current.expiresAtMs > now) return undefined
    const token = crypto.randomUUID()
    this.held.set(accountId, { token, expiresAtMs: now + ttlMs })
    return token
  }

  async release(accountId: string, token: string): Promise<void> {
    if (this.held.get(accountId)?.token === token) this.held.delete(accountId)
  }
}

export class RedisChatLock implements ChatLock {
  private constructor(private readonly redis: RedisClient & ScriptCommands) {}

  static async create(redis: RedisClient): Promise<RedisChatLock> {
    return new RedisChatLock(await withScripts(redis))
  }

  async acquire(accountId: string, ttlMs: number): Promise<string | undefined> {
    const token = crypto.randomUUID()
    const set = await this.redis.set(redisKeys.freeChatLock(accountId), token, 'PX', ttlMs, 'NX')
    return set === 'OK' ? token : undefined
  }

  async release(accountId: string, token: string): Promise<void> {
    await this.redis.gwReleaseLock(redisKeys.freeChatLock(accountId), token)
  }
}
