// A client that sends its body slowly, stalls or leaves halfway holds its own connection only: the
// process's ceiling counts requests whose body has arrived, and a body that never arrives is a 499.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { metricsText } from '../../../proxy/core/metrics.ts'
import { startTestGateway, type TestGateway } from '../../helpers/gateway.ts'
import { describeWith } from '../../helpers/services.ts'

const hello = [{ role: 'user', content: 'hello' }]

/** A request whose body stops after its first bytes, until `leave` ends it as a client gone. */
function stalledChat(gw: TestGateway, key: string | undefined, path = '/v1/chat/completions') {
  let leave: () => void = () => {}
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"model":"test/cheap",'))
      leave = () => controller.error(new DOMException('The connection was closed.', 'AbortError'))
    },
  })
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (key) headers.authorization = `Bearer ${key}`
  const response = gw.app.api.handle(
    new Request(`http://gateway.test${path}`, {
      method: 'POST',
      headers,
      body,
      duplex: 'half',
    } as RequestInit),
  )
  return { response, leave: () => leave() }
}

describeWith(['postgres', 'redis'], 'slow request bodies', () => {
  let gw: TestGateway
  let key: string
  let accountId: string
  beforeAll(async () => {
    gw = await startTestGateway({
      store: 'redis',
      database: 'postgres',
      env: { MAX_CONCURRENT_REQUESTS: '2' },
    })
    accountId = await gw.account('1')
    key = (await gw.key(accountId)).key
  })
  afterAll(() => gw.close())

  test('bodies still arriving, with or without a key, take no slot of the ceiling', async () => {
    const stalled = [
      stalledChat(gw, undefined),
      stalledChat(gw, undefined, '/v1/images/generations'),
      stalledChat(gw, key),
    ]
    await Bun.sleep(50)
    const answered = await gw.chat(key, { model: 'test/cheap', messages: hello })
    expect(answered.status).toBe(200)
    for (const request of stalled) request.leave()
    for (const request of stalled) expect((await request.response).status).toBe(499)
    expect(gw.app.gateway.ceiling.inUse).toBe(0)
    const snapshot = await gw.app.gateway.store.snapshot(accountId)
    expect(snapshot.inFlight).toBe(0)
    expect(snapshot.heldNano).toBe(0)
  })

  test('a client that leaves before its body arrived is counted as gone (499), not as an answer', async () => {
    const stalled = stalledChat(gw, key)
    await Bun.sleep(20)
    stalled.leave()
    expect((await stalled.response).status).toBe(499)
    const metrics = await metricsText()
    expect(metrics).toMatch(
      /gateway_requests_total\{style="chat",model="",provider="",status="499"\} [1-9]/,
    )
    expect(metrics).not.toMatch(
      /gateway_requests_total\{style="chat",model="",provider="",status="200"\}/,
    )
  })
})
