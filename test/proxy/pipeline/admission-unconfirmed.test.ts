// An admission store that does not answer: the request fails closed, quickly, is never sent upstream,
// and any hold it may have placed is released at its deadline.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { runMaintenance } from '../../../proxy/ops/maintenance.ts'
import {
  startGatewayOnOwnRedis,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts'
import type { RedisProcess } from '../../helpers/redis-process.ts'
import { describeWith } from '../../helpers/services.ts'

const hello = [{ role: 'user', content: 'hello' }]

describeWith('postgres', 'admission store unreachable', () => {
  let redis: RedisProcess
  let gw: TestGateway
  let accountId: string
  let key: string
  beforeAll(async () => {
    const started = await startGatewayOnOwnRedis({ env: { HOLD_DEADLINE_MS: '1000' } })
    ;[gw, redis] = [started, started.redis]
    accountId = await gw.account('1')
    key = (await gw.key(accountId)).key
    expect((await gw.chat(key, { model: 'test/cheap', messages: hello })).status).toBe(200)
  })
  afterAll(() => gw.close())

  test('a Redis that stops answering gives 502 admission_unconfirmed within the bound, nothing sent', async () => {
    const sent = gw.upstream.requests.length
    redis.pause()
    const started = performance.now()
    const response = await gw.chat(key, { model: 'test/cheap', messages: hello })
    const elapsed = performance.now() - started
    expect(response.status).toBe(502)
    expect(response.headers.get('x-service-error-code')).toBe('admission_unconfirmed')
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      'admission_unconfirmed',
    )
    expect(elapsed).toBeLessThan(2_000)
    expect(gw.upstream.requests.length).toBe(sent)

    // The admission may still have been applied once Redis resumes: that hold expires at its deadline.
    redis.resume()
    const { store, sql, inflight } = gw.app.gateway
    await Bun.sleep(1_200)
    for (let i = 0; i < 30 && (await store.snapshot(accountId)).inFlight > 0; i++) {
      await runMaintenance({ sql, store, inflight })
      await Bun.sleep(100)
    }
    expect(await store.snapshot(accountId)).toMatchObject({ heldNano: 0, inFlight: 0 })
    expect((await gw.chat(key, { model: 'test/cheap', messages: hello })).status).toBe(200)
  })

  test('a Redis that is gone gives 502 admission_unconfirmed at once', async () => {
    await redis.kill()
    const started = performance.now()
    const response = await gw.chat(key, { model: 'test/cheap', messages: hello })
    expect(response.status).toBe(502)
    expect(response.headers.get('x-service-error-code')).toBe('admission_unconfirmed')
    expect(performance.now() - started).toBeLessThan(2_000)
  })
})

describeWith('postgres', 'key store unreachable', () => {
  test('a key that cannot be read from Postgres gives 502 admission_unconfirmed, nothing sent', async () => {
    const gw = await startTestGateway({ store: 'memory', database: 'postgres' })
    const accountId = await gw.account('1')
    const { key } = await gw.key(accountId)
    // The key is not cached yet; its lookup now meets a closed pool.
    await gw.app.gateway.sql.end({ timeout: 1 })
    const response = await gw.chat(key, { model: 'test/cheap', messages: hello })
    expect(response.status).toBe(502)
    expect(response.headers.get('x-service-error-code')).toBe('admission_unconfirmed')
    expect(gw.upstream.requests).toHaveLength(0)
    await gw.close().catch(() => undefined)
  })
})
