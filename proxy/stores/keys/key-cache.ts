/**
 * The in-process cache of key records, by stored prefix (unknown prefixes are cached too, as empty).
 * A warm request reads no Postgres. Changes to keys and accounts invalidate entries at once on every
 * process: in-process directly, and across processes over Redis pub/sub when Redis is configured. A TTL
 * bounds how long an entry can outlive a lost invalidation message, and a heartbeat through the
 * subscription finds one that stopped delivering; entries past the TTL are dropped once a TTL, so the
 * cache holds the prefixes of recent lookups, not of every key ever presented.
 */
import type { RedisClient } from '../redis-client.ts'
import { log } from '../../core/log.ts'
import type { KeyRecord } from '../../core/key-record.ts'

type Entry = { records: KeyRecord[]; loadedAt: number }

export type Invalidation = { prefix: string } | { accountId: string }

/** How often a process checks, through its own subscription, that invalidations still reach it. */
const HEARTBEAT_MS = 2_000
/** Heartbeats missed before the subscription counts as not delivering. */
const MISSED_BEATS = 3

export class KeyCache {
  private readonly entries = new Map<string, Entry>()
  private readonly loading = new Map<string, Promise<KeyRecord[]>>()
  private publisher: RedisClient | undefined
  private subscriber: RedisClient | undefined
  private channel = ''
  private prunedAt = performance.now()
  private readonly beatId = crypto.randomUUID()
  private beatSeenAt = performance.now()
  private heartbeat: Timer | undefined
  private deaf = false

  constructor(
    private readonly load: (prefix: string) => Promise<KeyRecord[]>,
    private readonly ttlMs: number,
    private readonly heartbeatMs = HEARTBEAT_MS,
  ) {}

  /** Records with this prefix, from memory when fresh; one Postgres read per prefix on a miss. */
  get(prefix: string): KeyRecord[] | Promise<KeyRecord[]> {
    const entry = this.entries.get(prefix)
    if (entry && performance.now() - entry.loadedAt < this.ttlMs) return entry.records
    let pending = this.loading.get(prefix)
    if (!pending) {
      const startedAt = performance.now()
      pending = this.load(prefix)
        .then((records) => {
          // An invalidation that arrived during the read wins: do not cache what it may have replaced.
          if (this.loading.get(prefix) === pending) {
            this.entries.set(prefix, { records, loadedAt: startedAt })
            this.pruneStale()
          }
          return records
        })
        .finally(() => {
          if (this.loading.get(prefix) === pending) this.loading.delete(prefix)
        })
      this.loading.set(prefix, pending)
    }
    return pending
  }

  /** Entries held, fresh or stale. */
  get size(): number {
    return this.entries.size
  }

  /**
   * Drops entries past their TTL, at most once a TTL: a stale entry is read again on its next use
   * anyway, and without this every prefix ever looked up (each unknown key's too) would stay in
   * memory.
   */
  private pruneStale(): void {
    const now = performance.now()
    if (now - this.prunedAt < this.ttlMs) return
    this.prunedAt = now
    for (const [prefix, entry] of this.entries)
      if (now - entry.loadedAt >= this.ttlMs) this.entries.delete(prefix)
  }

  /** Drops entries locally and tells the other processes to do the same (they fall back to the TTL if that fails). */
  async invalidate(change: Invalidation): Promise<void> {
    this.apply(change)
    if (!this.publisher) return
    await this.publisher.publish(this.channel, JSON.stringify(change)).catch((error) => {
      log.error('key invalidation not published; other processes catch up within the cache TTL', {
        error,
      })
    })
  }

  apply(change: Invalidation): void {
    if ('prefix' in change) {
      this.entries.delete(change.prefix)
      this.loading.delete(change.prefix)
      return
    }
    for (const [prefix, entry] of this.entries) {
      if (entry.records.some((record) => record.accountId === change.accountId))
        this.entries.delete(prefix)
    }
    this.loading.clear()
  }

  clear(): void {
    this.entries.clear()
    this.loading.clear()
  }

  /** Shares invalidations through Redis: `subscriber` is a dedicated connection. */
  async connect(publisher: RedisClient, subscriber: RedisClient, channel: string): Promise<void> {
    this.publisher = publisher
    this.subscriber = subscriber
    this.channel = channel
    subscriber.on('message', (_channel: string, message: string) => {
      try {
        const change = JSON.parse(message) as Invalidation | { beat: string }
        if ('beat' in change) {
          if (change.beat === this.beatId) this.beatSeenAt = performance.now()
        } else this.apply(change)
      } catch (error) {
        log.warn('key invalidation message unreadable', { error })
      }
    })
    this.heartbeat = setInterval(() => this.beat(), this.heartbeatMs)
    this.heartbeat.unref?.()
    // Messages sent while disconnected are lost: start clean after every reconnect, and again once the
    // subscription is back (the client renews it after `ready`; this SUBSCRIBE is answered after that
    // one), so a record read before the renewal cannot outlive a change published before it.
    subscriber.on('ready', () => {
      this.clear()
      subscriber.subscribe(channel).then(
        () => this.clear(),
        () => undefined,
      )
    })
    await subscriber.subscribe(channel)
  }

  /**
   * A subscription can stop delivering without its connection closing (a Redis Cluster node that hangs:
   * the client neither notices nor says when it moves the subscription). Each process publishes a
   * heartbeat of its own and listens for it; while it does not come back, the cache is cleared every
   * beat (entries live a beat, not the TTL) and the subscription is renewed.
   */
  private beat(): void {
    const missed = performance.now() - this.beatSeenAt > MISSED_BEATS * this.heartbeatMs
    if (missed) {
      if (!this.deaf)
        log.warn('key invalidations stopped reaching this process; its key cache is kept short', {
          channel: this.channel,
        })
      this.deaf = true
      this.clear()
      this.subscriber?.subscribe(this.channel).catch(() => undefined)
    } else if (this.deaf) {
      this.deaf = false
      this.clear()
      log.info('key invalidations reach this process again', { channel: this.channel })
    }
    this.publisher
      ?.publish(this.channel, JSON.stringify({ beat: this.beatId }))
      .catch(() => undefined)
  }

  async disconnect(): Promise<void> {
    clearInterval(this.heartbeat)
    await this.subscriber?.quit().catch(() => this.subscriber?.disconnect())
  }
}
