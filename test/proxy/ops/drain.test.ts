// Shutdown drains: the listeners close at once, open requests get until the drain deadline, then
// streams are cut and settled for what was delivered and requests still waiting on their provider are
// released; no hold is left open and the ledger has every row before the stores close.
import { afterEach, expect, test } from 'bun:test'
import { createRedisStore } from '../../../proxy/stores/admission/redis-store.ts'
import type { AccountSnapshot } from '../../../proxy/stores/admission/store.ts'
import { startTestGateway, testModel, type TestGateway } from '../../helpers/gateway.ts'
import { ledgerOf, sumOf } from '../../helpers/ledger.ts'
import { describeWith, redisUrl } from '../../helpers/services.ts'
import { storeSetups } from '../../helpers/setups.ts'

const hello = [{ role: 'user', content: 'hello' }]
const models = [
  testModel('test/slow', 'fake?tokens=400&chunkDelay=20'),
  testModel('test/quick', 'fake?tokens=10&chunkDelay=20'),
  testModel('test/waiting', 'fake?delay=4000'),
]

type Started = { gw: TestGateway; apiUrl: string; siteUrl: string; accountId: string; key: string }

for (const setup of storeSetups.filter((candidate) => candidate.database === 'postgres')) {
  describeWith([...setup.needs], `drain at shutdown (${setup.store} store)`, () => {
    let current: TestGateway | undefined
    afterEach(async () => {
      await current?.close()
      current = undefined
    })

    async function start(): Promise<Started> {
      const gw = (current = await startTestGateway({
        store: setup.store,
        database: setup.database,
        models,
      }))
      const { apiUrl, siteUrl } = gw.app.listen()
      const accountId = await gw.account('1')
      const { key } = await gw.key(accountId)
      return { gw, apiUrl, siteUrl, accountId, key }
    }

    const post = (started: Started, body: unknown) =>
      fetch(`${started.apiUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${started.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })

    /** The account as the store sees it after the stop (the Redis store is closed by then: a new client reads it). */
    async function snapshotAfterStop(gw: TestGateway, accountId: string): Promise<AccountSnapshot> {
      if (setup.store === 'memory') return gw.app.gateway.store.snapshot(accountId)
      const store = await createRedisStore({
        url: redisUrl!,
        keyPrefix: gw.app.config.REDIS_KEY_PREFIX,
        timeoutMs: 1_000,
      })
      try {
        return await store.snapshot(accountId)
      } finally {
        await store.close()
      }
    }

    async function logOf(gw: TestGateway, requestId: string) {
      const [row] = await gw.app.gateway.sql<
        { status: number; error_code: string | null; charged_nano: number }[]
      >`
        SELECT status, error_code, charged_nano FROM request_logs WHERE request_id = ${requestId}`
      return row
    }

    async function refused(url: string): Promise<boolean> {
      const { hostname, port } = new URL(url)
      try {
        const socket = await Bun.connect({ hostname, port: Number(port), socket: { data() {} } })
        socket.end()
        return false
      } catch {
        return true
      }
    }

    test('a stream still running at the deadline is cut: the client stream ends with an error event, the hold ends, the delivery is settled', async () => {
      const started = await start()
      const { gw, accountId } = started
      const aborted = gw.upstream.abortedStreams
      const response = await post(started, { model: 'test/slow', messages: hello, stream: true })
      expect(response.status).toBe(200)
      const requestId = response.headers.get('x-request-id')!
      const reader = response.body!.getReader()
      await reader.read()
      const received = (async () => {
        let text = ''
        for (;;) {
          const chunk = await reader.read()
          if (chunk.done) return text
          text += new TextDecoder().decode(chunk.value)
        }
      })()

      const began = performance.now()
      const stopping = gw.app.stop({ drainMs: 300 })
      await Bun.sleep(50)
      expect(await refused(started.apiUrl)).toBe(true)
      expect(await refused(started.siteUrl)).toBe(true)
      await stopping
      expect(performance.now() - began).toBeLessThan(3_000)

      const text = await received
      expect(text).toContain('"error"')
      // The gateway cut it, and says so: the provider did not fail.
      expect(text).toContain('The gateway is shutting down')
      expect(text).not.toContain('[DONE]')
      expect(gw.upstream.abortedStreams).toBe(aborted + 1)
      expect(gw.app.gateway.inflight.size).toBe(0)

      const snapshot = await snapshotAfterStop(gw, accountId)
      expect(snapshot).toMatchObject({ inFlight: 0, heldNano: 0 })
      const ledger = await ledgerOf(gw, accountId)
      const rows = ledger.filter((row) => row.request_id === requestId)
      expect(rows.length).toBeGreaterThan(0)
      for (const row of rows) expect(['charge', 'writeoff']).toContain(row.kind)
      expect(snapshot.balanceNano).toBe(sumOf(ledger))
      expect(await logOf(gw, requestId)).toMatchObject({
        status: 502,
        error_code: 'upstream_error',
      })
    })

    test('a stream that ends within the deadline completes and is charged normally', async () => {
      const started = await start()
      const { gw, accountId } = started
      const response = await post(started, { model: 'test/quick', messages: hello, stream: true })
      expect(response.status).toBe(200)
      const requestId = response.headers.get('x-request-id')!
      const received = response.text()

      const began = performance.now()
      await gw.app.stop({ drainMs: 10_000 })
      expect(performance.now() - began).toBeLessThan(5_000)
      const text = await received
      expect(text).toContain('data: [DONE]')
      expect(text).not.toContain('"error"')

      const snapshot = await snapshotAfterStop(gw, accountId)
      expect(snapshot).toMatchObject({ inFlight: 0, heldNano: 0 })
      const ledger = await ledgerOf(gw, accountId)
      const rows = ledger.filter((row) => row.request_id === requestId)
      expect(rows.map((row) => row.kind)).toEqual(['charge'])
      expect(rows[0]!.amount_nano).toBeLessThan(0)
      expect(snapshot.balanceNano).toBe(sumOf(ledger))
      expect(await logOf(gw, requestId)).toMatchObject({ status: 200, error_code: null })
    })

    test('a request still waiting for its provider at the deadline is released, without waiting for the provider', async () => {
      const started = await start()
      const { gw, accountId } = started
      const answer = post(started, { model: 'test/waiting', messages: hello }).then(
        (response) => response.status,
        () => 'closed',
      )
      const until = Date.now() + 5_000
      while (gw.app.gateway.inflight.size === 0 && Date.now() < until) await Bun.sleep(10)
      expect(gw.app.gateway.inflight.size).toBe(1)

      const began = performance.now()
      await gw.app.stop({ drainMs: 200 })
      expect(performance.now() - began).toBeLessThan(3_000)
      expect(await answer).toBe('closed')

      const snapshot = await snapshotAfterStop(gw, accountId)
      expect(snapshot).toMatchObject({ inFlight: 0, heldNano: 0 })
      const ledger = await ledgerOf(gw, accountId)
      expect(ledger.map((row) => row.kind)).toEqual(['credit'])
      expect(snapshot.balanceNano).toBe(sumOf(ledger))
      const [row] = await gw.app.gateway.sql<{ charged_nano: number; output_tokens: number }[]>`
        SELECT charged_nano, output_tokens FROM request_logs WHERE account_id = ${accountId}`
      expect(row).toEqual({ charged_nano: 0, output_tokens: 0 })
    })
  })
}
