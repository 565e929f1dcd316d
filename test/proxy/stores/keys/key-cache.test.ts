// The key cache holds the prefixes of recent lookups only: entries past the TTL are dropped (once a
// TTL), so a stream of unknown keys, each cached as "no such key", does not grow it without end.
import { expect, test } from 'bun:test'
import { KeyCache } from '../../../../proxy/stores/keys/key-cache.ts'
import { connectRedis } from '../../../../proxy/stores/redis-client.ts'
import { describeWith, redisUrl, uniqueName } from '../../../helpers/services.ts'

test('unknown prefixes looked up once leave the cache after the TTL', async () => {
  let loads = 0
  const cache = new KeyCache(async () => {
    loads += 1
    return []
  }, 50)
  for (let i = 0; i < 1_000; i++) await cache.get(`svc-live-${String(i).padStart(5, '0')}`)
  expect(cache.size).toBe(1_000)
  expect(loads).toBe(1_000)
  await Bun.sleep(60)
  // The next lookup after a TTL drops what is stale; the one just read stays.
  await cache.get('svc-live-later')
  expect(cache.size).toBe(1)
  // A fresh entry is still answered from memory.
  await cache.get('svc-live-later')
  expect(loads).toBe(1_001)
})

describeWith('redis', 'key cache over Redis', () => {
  test('a subscription that stops delivering without closing is found by its heartbeat: the cache is kept short and the subscription renewed', async () => {
    const channel = uniqueName('test:keys:')
    const publisher = connectRedis(redisUrl!, {})
    const subscriber = connectRedis(redisUrl!, {})
    let loads = 0
    const cache = new KeyCache(
      async () => {
        loads += 1
        return []
      },
      60_000,
      50,
    )
    try {
      await cache.connect(publisher, subscriber, channel)
      await Bun.sleep(150)
      await cache.get('svc-live-kept')
      await Bun.sleep(300)
      // Delivering: the entry lives its TTL.
      expect(cache.size).toBe(1)
      // The subscription ends behind the cache's back, as on a node that hangs.
      await subscriber.unsubscribe(channel)
      await Bun.sleep(250)
      expect(cache.size).toBe(0)
      // Renewed by the heartbeat: entries live their TTL again, and invalidations arrive.
      await Bun.sleep(300)
      await cache.get('svc-live-kept')
      await Bun.sleep(300)
      expect(cache.size).toBe(1)
      await publisher.publish(channel, JSON.stringify({ prefix: 'svc-live-kept' }))
      await Bun.sleep(50)
      expect(cache.size).toBe(0)
      expect(loads).toBe(2)
    } finally {
      await cache.disconnect()
      publisher.disconnect()
    }
  })

  test('after the subscriber reconnects, a record read before its subscription is back is dropped', async () => {
    const name = uniqueName('keys-sub-')
    const publisher = connectRedis(redisUrl!, {})
    const subscriber = connectRedis(redisUrl!, { connectionName: name })
    const cache = new KeyCache(async () => [], 60_000)
    try {
      await cache.connect(publisher, subscriber, uniqueName('test:keys:'))
      // A subscribed connection takes no other command: its ID is read from the server's list.
      const clients = String(await publisher.call('CLIENT', 'LIST'))
      const id = /(?:^|\n)id=(\d+) .*? name=(\S+)/g
      const ids = [...clients.matchAll(id)].filter((match) => match[2] === name)
      expect(ids).toHaveLength(1)
      // Read right at the reconnect, before the renewed subscription could carry a change to it.
      const reconnected = new Promise<void>((resolve) =>
        subscriber.once('ready', () => {
          void cache.get('svc-live-window')
          resolve()
        }),
      )
      await publisher.call('CLIENT', 'KILL', 'ID', ids[0]![1]!)
      await reconnected
      await Bun.sleep(200)
      expect(cache.size).toBe(0)
      // Once the subscription is back, reads are cached again.
      await cache.get('svc-live-after')
      expect(cache.size).toBe(1)
    } finally {
      await cache.disconnect()
      publisher.disconnect()
    }
  })
})
