// GET /metrics: the Prometheus text of this process on both servers, the gateway's series with bounded
// labels, gauges read at scrape time, and METRICS_TOKEN.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import {
  recordAdmission,
  recordRequest,
  recordUpstreamError,
  setBreakerSource,
} from '../../../proxy/core/metrics.ts'
import { startTestGateway, testModel, type TestGateway } from '../../helpers/gateway.ts'
import { describeWith } from '../../helpers/services.ts'

const hello = [{ role: 'user', content: 'hello' }]

/** The value of the first series of `name` whose labels include `labels`. */
function sample(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!match || match[1] !== name) continue
    const found = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(([, key, value]) => [
        key,
        value,
      ]),
    )
    if (Object.entries(labels).every(([key, value]) => found[key] === value))
      return Number(match[3])
  }
  return undefined
}

async function scrape(
  gw: TestGateway,
  server: 'api' | 'site',
  headers: Record<string, string> = {},
): Promise<Response> {
  return gw.app[server].handle(new Request('http://gateway.test/metrics', { headers }))
}

describeWith('postgres', 'metrics', () => {
  let gw: TestGateway
  let key: string
  beforeAll(async () => {
    gw = await startTestGateway({
      store: 'memory',
      database: 'postgres',
      models: [
        testModel('test/cheap', 'fake'),
        testModel('test/slow', 'fake?tokens=100&chunkDelay=20'),
      ],
    })
    key = (await gw.key(await gw.account('1'))).key
  })
  afterAll(() => gw.close())

  for (const server of ['api', 'site'] as const) {
    test(`the ${server} server serves the Prometheus text with the gateway's and the process's metrics`, async () => {
      expect((await gw.chat(key, { model: 'test/cheap', messages: hello })).status).toBe(200)
      const response = await scrape(gw, server)
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toStartWith('text/plain')
      const text = await response.text()
      for (const name of [
        'gateway_open_holds',
        'gateway_inflight_requests',
        'gateway_breaker_state',
        'gateway_requests_total',
        'gateway_admission_outcomes_total',
        'gateway_upstream_errors_total',
        'gateway_request_duration_seconds',
        'gateway_time_to_first_byte_seconds',
      ]) {
        expect(text).toContain(`# TYPE ${name} `)
      }
      expect(text).toContain('process_cpu_user_seconds_total')
      expect(sample(text, 'gateway_open_holds')).toBe(0)
      expect(sample(text, 'gateway_processes')).toBe(1)
    })
  }

  test('recorded requests count by style, model, provider and status, with duration and first-byte histograms', async () => {
    // The registry is per process: other suites in this run may have counted requests before.
    const firstBytesBefore = sample(
      await (await scrape(gw, 'api')).text(),
      'gateway_time_to_first_byte_seconds_count',
      { style: 'messages' },
    )
    recordRequest({
      style: 'chat',
      model: 'test/cheap',
      provider: 'fake',
      status: 200,
      latencyMs: 420,
      firstByteMs: 80,
    })
    recordRequest({
      style: 'chat',
      model: 'test/cheap',
      provider: 'fake',
      status: 200,
      latencyMs: 120,
    })
    recordRequest({
      style: 'messages',
      model: '',
      provider: '',
      status: 401,
      code: 'invalid_api_key',
      latencyMs: 3,
    })
    const text = await (await scrape(gw, 'api')).text()
    expect(
      sample(text, 'gateway_requests_total', {
        style: 'chat',
        model: 'test/cheap',
        provider: 'fake',
        status: '200',
      }),
    ).toBeGreaterThanOrEqual(2)
    expect(
      sample(text, 'gateway_requests_total', {
        style: 'messages',
        model: '',
        provider: '',
        status: '401',
      }),
    ).toBeGreaterThanOrEqual(1)
    expect(
      sample(text, 'gateway_request_duration_seconds_bucket', { style: 'chat', le: '0.5' }),
    ).toBeGreaterThanOrEqual(2)
    expect(
      sample(text, 'gateway_time_to_first_byte_seconds_count', { style: 'chat' }),
    ).toBeGreaterThanOrEqual(1)
    expect(sample(text, 'gateway_time_to_first_byte_seconds_count', { style: 'messages' })).toBe(
      firstBytesBefore,
    )
  })

  test('a model id outside the catalog is counted as other, and long values are cut', async () => {
    recordRequest({
      style: 'chat',
      model: 'someone/made-this-up',
      provider: 'x'.repeat(500),
      status: 404,
      code: 'unknown_model',
      latencyMs: 2,
    })
    const text = await (await scrape(gw, 'api')).text()
    expect(text).not.toContain('someone/made-this-up')
    expect(
      sample(text, 'gateway_requests_total', {
        model: 'other',
        provider: 'x'.repeat(64),
        status: '404',
      }),
    ).toBeGreaterThanOrEqual(1)
  })

  test('admission outcomes and upstream errors are counted by their codes', async () => {
    recordAdmission('admitted')
    recordAdmission('insufficient_credits')
    recordUpstreamError('fake', 'upstream_rate_limited')
    const text = await (await scrape(gw, 'api')).text()
    expect(
      sample(text, 'gateway_admission_outcomes_total', { outcome: 'admitted' }),
    ).toBeGreaterThanOrEqual(1)
    expect(
      sample(text, 'gateway_admission_outcomes_total', { outcome: 'insufficient_credits' }),
    ).toBeGreaterThanOrEqual(1)
    expect(
      sample(text, 'gateway_upstream_errors_total', {
        provider: 'fake',
        code: 'upstream_rate_limited',
      }),
    ).toBeGreaterThanOrEqual(1)
  })

  test('breaker states come from the registered source at scrape time', async () => {
    setBreakerSource(() => [
      // Routes name the provider's models, not catalog IDs: each keeps its own series.
      { provider: 'fake', model: 'gpt-cheap-2025', state: 2 },
      { provider: 'fake', model: 'gpt-slow-2025', state: 0 },
    ])
    try {
      const text = await (await scrape(gw, 'api')).text()
      expect(
        sample(text, 'gateway_breaker_state', { provider: 'fake', model: 'gpt-cheap-2025' }),
      ).toBe(2)
      expect(
        sample(text, 'gateway_breaker_state', { provider: 'fake', model: 'gpt-slow-2025' }),
      ).toBe(0)
    } finally {
      setBreakerSource(undefined)
    }
    expect(
      sample(await (await scrape(gw, 'api')).text(), 'gateway_breaker_state', { provider: 'fake' }),
    ).toBeUndefined()
  })

  test('a stream in progress shows as one open hold and one request in flight', async () => {
    const response = await gw.chat(key, { model: 'test/slow', messages: hello, stream: true })
    expect(response.status).toBe(200)
    const during = await (await scrape(gw, 'api')).text()
    expect(sample(during, 'gateway_open_holds')).toBe(1)
    expect(sample(during, 'gateway_inflight_requests')).toBe(1)
    await response.text()
    const until = Date.now() + 5_000
    while (gw.app.gateway.inflight.size > 0 && Date.now() < until) await Bun.sleep(20)
    const after = await (await scrape(gw, 'api')).text()
    expect(sample(after, 'gateway_open_holds')).toBe(0)
    expect(sample(after, 'gateway_inflight_requests')).toBe(0)
  })

  test('a request through the gateway is counted with its style, model, provider, status and admission', async () => {
    const before = await (await scrape(gw, 'api')).text()
    const labels = { style: 'chat', model: 'test/cheap', provider: 'fake', status: '200' }
    const count = sample(before, 'gateway_requests_total', labels) ?? 0
    const admitted =
      sample(before, 'gateway_admission_outcomes_total', { outcome: 'admitted' }) ?? 0
    expect((await gw.chat(key, { model: 'test/cheap', messages: hello })).status).toBe(200)
    await Bun.sleep(50)
    const after = await (await scrape(gw, 'api')).text()
    expect(sample(after, 'gateway_requests_total', labels)).toBe(count + 1)
    expect(sample(after, 'gateway_admission_outcomes_total', { outcome: 'admitted' })).toBe(
      admitted + 1,
    )
  })

  test('the other endpoints that take a key are counted too: the catalog, account operations, image status', async () => {
    const get = (path: string) =>
      gw.app.api.handle(
        new Request(`http://gateway.test${path}`, { headers: { authorization: `Bearer ${key}` } }),
      )
    const counted = async (labels: Record<string, string>) =>
      sample(await (await scrape(gw, 'api')).text(), 'gateway_requests_total', labels) ?? 0
    const models = { style: 'models', model: '', provider: '', status: '200' }
    const images = { style: 'images', model: '', provider: '', status: '404' }
    const [modelsBefore, imagesBefore] = [await counted(models), await counted(images)]
    expect((await get('/v1/models')).status).toBe(200)
    expect((await get('/v1/images/status?request_id=req_none')).status).toBe(404)
    expect(await counted(models)).toBe(modelsBefore + 1)
    expect(await counted(images)).toBe(imagesBefore + 1)
  })
})

describeWith('postgres', 'metrics behind METRICS_TOKEN', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({
      store: 'memory',
      database: 'postgres',
      env: { METRICS_TOKEN: 'scrape-secret' },
    })
  })
  afterAll(() => gw.close())

  for (const server of ['api', 'site'] as const) {
    describe(`the ${server} server`, () => {
      test('refuses a scrape without the token, or with another one, with 401', async () => {
        for (const headers of [
          {},
          { authorization: 'Bearer wrong' },
          { authorization: 'scrape-secret' },
        ] as Record<string, string>[]) {
          const response = await scrape(gw, server, headers)
          expect(response.status).toBe(401)
          expect(response.headers.get('x-service-error-code')).toBe('unauthorized')
        }
      })

      test('serves the metrics with Authorization: Bearer <token>', async () => {
        const response = await scrape(gw, server, { authorization: 'Bearer scrape-secret' })
        expect(response.status).toBe(200)
        expect(await response.text()).toContain('gateway_open_holds')
      })

      test('keeps /healthz and /readyz open', async () => {
        for (const path of ['/healthz', '/readyz']) {
          expect(
            (await gw.app[server].handle(new Request(`http://gateway.test${path}`))).status,
          ).toBe(200)
        }
      })
    })
  }
})
