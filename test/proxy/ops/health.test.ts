// GET /healthz and GET /readyz on both servers: up, ready while both stores answer, unready (503) when
// one does not or while the process drains.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import {
  startGatewayOnOwnRedis,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts'
import type { RedisProcess } from '../../helpers/redis-process.ts'
import { describeWith } from '../../helpers/services.ts'

type Probe = { status: string; checks?: Record<string, string> }

const servers = ['api', 'site'] as const

async function probe(
  gw: TestGateway,
  server: 'api' | 'site',
  path: string,
): Promise<{ status: number; body: Probe }> {
  const response = await gw.app[server].handle(new Request(`http://gateway.test${path}`))
  return { status: response.status, body: (await response.json()) as Probe }
}

describeWith('postgres', 'health and readiness', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres' })
  })
  afterAll(() => gw.close())

  for (const server of servers) {
    test(`the ${server} server answers /healthz with 200 ok`, async () => {
      expect(await probe(gw, server, '/healthz')).toEqual({ status: 200, body: { status: 'ok' } })
    })

    test(`the ${server} server answers /readyz with 200 ready and each store's check`, async () => {
      expect(await probe(gw, server, '/readyz')).toEqual({
        status: 200,
        body: { status: 'ready', checks: { postgres: 'ok', admission: 'ok' } },
      })
    })
  }
})

describeWith('postgres', 'readiness with a store unreachable', () => {
  let gw: Awaited<ReturnType<typeof startGatewayOnOwnRedis>>
  let redis: RedisProcess
  beforeAll(async () => {
    gw = await startGatewayOnOwnRedis()
    redis = gw.redis
  })
  afterAll(() => gw.close())

  test('a Redis that does not answer makes both servers unready within the probe bound', async () => {
    expect((await probe(gw, 'api', '/readyz')).status).toBe(200)
    redis.pause()
    try {
      for (const server of servers) {
        const started = performance.now()
        const { status, body } = await probe(gw, server, '/readyz')
        expect(status).toBe(503)
        expect(body.status).toBe('unready')
        expect(body.checks!.postgres).toBe('ok')
        expect(body.checks!.admission).toStartWith('error: ')
        expect(performance.now() - started).toBeLessThan(1_500)
      }
    } finally {
      redis.resume()
    }
  })

  test('a Redis that is gone makes /readyz 503 at once while /healthz stays 200', async () => {
    const notConnected =
      'error: not connected to Redis (reconnecting; check that it is running and REDIS_URL)'
    // Killed while the probe's ping is on its way: the ping was written before the end was seen. On a
    // machine so loaded that the kill comes after the store's 200 ms deadline, the ping timed out first.
    redis.pause()
    const sent = performance.now()
    const inFlight = probe(gw, 'api', '/readyz')
    await Bun.sleep(20)
    process.kill(redis.pid, 'SIGKILL')
    const killedAfter = performance.now() - sent
    const admission = (await inFlight).body.checks!.admission
    if (killedAfter < 150) expect(admission).toBe(notConnected)
    else expect(admission).toStartWith('error: ')
    await redis.kill()
    const { status, body } = await probe(gw, 'site', '/readyz')
    expect(status).toBe(503)
    expect(body.checks!.admission).toBe(notConnected)
    expect((await probe(gw, 'api', '/healthz')).status).toBe(200)
  })
})

describeWith('postgres', 'readiness with Postgres unreachable', () => {
  test('a closed Postgres pool makes /readyz 503 naming the postgres check', async () => {
    const gw = await startTestGateway({ store: 'memory', database: 'postgres' })
    await gw.app.gateway.sql.end({ timeout: 1 })
    const { status, body } = await probe(gw, 'api', '/readyz')
    expect(status).toBe(503)
    expect(body.checks).toMatchObject({ admission: 'ok' })
    expect(body.checks!.postgres).toStartWith('error: ')
    await gw.close().catch(() => undefined)
  })
})

describeWith('postgres', 'readiness while draining', () => {
  test('once stop begins, /readyz answers 503 draining on both servers', async () => {
    const gw = await startTestGateway({ store: 'memory', database: 'postgres' })
    const stopping = gw.app.stop({ drainMs: 2_000 })
    for (const server of servers) {
      const { status, body } = await probe(gw, server, '/readyz')
      expect(status).toBe(503)
      expect(body).toEqual({
        status: 'unready',
        checks: { postgres: 'ok', admission: 'ok', shutdown: 'draining' },
      })
    }
    await stopping
    await gw.close()
  })
})
