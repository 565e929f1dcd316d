// The key cache holds the prefixes of recent lookups only: entries past the TTL are dropped (once a
// TTL), so a stream of unknown keys, each cached as "no such key", does not grow it without end.
import { expect, test } from 'bun:test'
import { KeyCache } from '../../../../proxy/stores/keys/key-cache.ts'

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
