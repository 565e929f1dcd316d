// Ten thousand randomly malformed requests (bodies, headers, forwarded addresses, keys) against every route
// of the API server and the site's public routes, over HTTP: never a 5xx, every refusal a structured error
// whose code is in the body and in x-service-error-code, the API server's answers with a request ID and a
// cost, and the process's memory flat. Seeded: a failure prints the seed and the request.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testModel } from '../../helpers/gateway.ts'
import { describeWith } from '../../helpers/services.ts'
import { prng } from '../../helpers/prng.ts'
import { startImageGateway, type ImageGateway } from '../pipeline/images/image-gateway.ts'

const SEED = Number(process.env.FUZZ_SEED ?? 20261125)
const REQUESTS = 10_000
const AT_ONCE = 8

type Shot = {
  server: 'api' | 'site'
  method: string
  path: string
  headers: Record<string, string>
  body?: string | Uint8Array<ArrayBuffer>
}

function generator(next: () => number, validKey: string) {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!
  const int = (max: number) => Math.floor(next() * max)
  const ascii = (length: number) =>
    Array.from({ length }, () => String.fromCharCode(32 + int(95))).join('')
  const junk = () =>
    pick([ascii(int(40)), '', ' ', 'null', '[]', '{}', '"', '\\', '%00', ascii(2000)])

  const keys = () =>
    pick([
      undefined,
      validKey,
      validKey.slice(0, -1),
      `${validKey}x`,
      'svc-live-1111111111111111111111111x',
      'svc-live-',
      'sk-proj-abc',
      ascii(int(300)),
      'Bearer',
      'x'.repeat(8000),
    ])
  const forwarded = () =>
    pick([
      undefined,
      '198.51.100.7',
      '1.1.1.1, 2.2.2.2, 127.0.0.1',
      '[2001:db8::1]:80',
      '2001:db8::zz',
      '999.999.999.999',
      ', , ,',
      ascii(int(200)),
      Array.from({ length: 200 }, (_, index) => `10.0.${index % 256}.1`).join(','),
      'for="[::1]:80";proto=https, for=unknown',
    ])
  const value = (depth: number): unknown => {
    switch (int(depth > 4 ? 6 : 9)) {
      case 0:
        return null
      case 1:
        return next() < 0.5
      case 2:
        return pick([0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, Number.MAX_SAFE_INTEGER, 4096, 1e21])
      case 3:
        return junk()
      case 4:
        return pick([
          'user',
          'assistant',
          'system',
          'tool',
          'developer',
          'text',
          'image_url',
          'test/cheap',
          'test/image',
          'service/auto',
          '@preset/x',
        ])
      case 5:
        return ascii(int(20))
      case 6:
        return Array.from({ length: int(4) }, () => value(depth + 1))
      default: {
        const fields = [
          'model',
          'messages',
          'input',
          'role',
          'content',
          'max_tokens',
          'stream',
          'tools',
          'tool_choice',
          'temperature',
          'prompt',
          'size',
          'n',
          'email',
          'wallet',
          'secret',
          'altcha',
          'type',
          'text',
          'system',
          'max_output_tokens',
          'response_format',
          'stop',
          ascii(8),
        ]
        return Object.fromEntries(
          Array.from({ length: int(6) }, () => [pick(fields), value(depth + 1)]),
        )
      }
    }
  }
  const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth)
  const almost = () =>
    pick([
      { model: 'test/cheap', messages: [{ role: 'user', content: value(2) }] },
      { model: 'test/cheap', max_tokens: value(3), messages: value(1) },
      { model: value(3), input: value(2) },
      { model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }], tools: value(1) },
      { model: 'test/cheap', messages: [{ role: 'user', content: 'hi' }], stream: value(3) },
      { model: 'test/image', prompt: value(3), size: value(3) },
      value(0),
    ])
  const body = (): string | Uint8Array<ArrayBuffer> | undefined =>
    pick([
      () => undefined,
      () => JSON.stringify(almost()),
      () => JSON.stringify(almost()).slice(0, int(60)),
      () => JSON.stringify(value(0)),
      () => nested(1 + int(200)),
      () => junk(),
      () => new Uint8Array(Array.from({ length: int(64) }, () => int(256))),
      () =>
        JSON.stringify({
          model: 'test/cheap',
          messages: [{ role: 'user', content: 'x'.repeat(int(20_000)) }],
        }),
    ])()

  const apiPaths = (): { method: string; path: string } =>
    pick([
      { method: 'POST', path: '/v1/chat/completions' },
      { method: 'POST', path: '/v1/messages' },
      { method: 'POST', path: '/v1/responses' },
      { method: 'POST', path: '/api/v1/chat/completions' },
      { method: 'GET', path: '/v1/models' },
      {
        method: 'GET',
        path: `/v1/responses/${pick(['resp_x', ascii(10).replace(/[/?#%]/g, ''), 'a'.repeat(300)])}`,
      },
      { method: 'DELETE', path: '/v1/responses/resp_unknown' },
      { method: 'POST', path: '/v1/images/generations' },
      { method: 'GET', path: `/v1/images/status?request_id=${encodeURIComponent(junk())}` },
      { method: 'POST', path: '/me/claim' },
      { method: 'POST', path: `/keys/${encodeURIComponent(junk() || 'k')}/rotate` },
      { method: pick(['PUT', 'PATCH', 'GET']), path: '/v1/chat/completions' },
      { method: 'POST', path: `/v1/${ascii(int(10)).replace(/[?#%]/g, '')}` },
    ])
  const sitePaths = (): { method: string; path: string } =>
    pick([
      { method: 'POST', path: '/admin/v1/session/link' },
      { method: 'POST', path: '/admin/v1/setup' },
      { method: 'POST', path: '/admin/v1/auth/email' },
      { method: 'POST', path: '/admin/v1/auth/wallet' },
      { method: 'GET', path: '/admin/v1/me' },
      { method: 'PUT', path: '/admin/v1/alerts' },
      { method: 'GET', path: `/api/v1/models` },
      { method: 'POST', path: '/operator/v1/accounts' },
    ])

  return (): Shot => {
    const server = next() < 0.75 ? 'api' : 'site'
    const { method, path } = server === 'api' ? apiPaths() : sitePaths()
    const headers: Record<string, string> = {}
    const key = keys()
    if (key !== undefined)
      headers[pick(['authorization', 'authorization', 'x-api-key'])] = pick([
        `Bearer ${key}`,
        key,
        `bearer  ${key} `,
        `Basic ${key}`,
      ])
    const address = forwarded()
    if (address !== undefined) headers[pick(['x-forwarded-for', 'forwarded'])] = address
    if (next() < 0.7)
      headers['content-type'] = pick([
        'application/json',
        'text/plain',
        'application/json; charset=utf-16',
        ascii(10),
      ])
    if (server === 'site' && next() < 0.7)
      headers.origin = pick(['http://site.test', 'https://evil.test', 'null'])
    if (next() < 0.1) headers['anthropic-version'] = pick(['2023-06-01', ascii(5)])
    return {
      server,
      method,
      path,
      headers,
      body: method === 'GET' || method === 'DELETE' ? undefined : body(),
    }
  }
}

function malformed(stores: { store: 'memory' | 'redis'; database: 'postgres' | 'embedded' }) {
  let gw: ImageGateway
  let urls: { apiUrl: string; siteUrl: string }
  let key: string
  beforeAll(async () => {
    gw = await startImageGateway({
      ...stores,
      models: [testModel('test/cheap', 'fake')],
      // Limits that must not turn the run into one long 429: the refusals themselves are what is tested.
      env: {
        TRUSTED_PROXIES: '127.0.0.1',
        INVALID_KEYS_PER_MINUTE: '1000000',
        SIGN_IN_ATTEMPTS_PER_MINUTE: '1000000',
        CATALOG_READS_PER_MINUTE: '1000000',
      },
    })
    urls = gw.app.listen()
    key = (await gw.key(await gw.account('1000'))).key
  })
  afterAll(() => gw?.close())

  test(`${REQUESTS} random malformed requests: no 5xx, structured errors with their headers, memory flat (seed ${SEED})`, async () => {
    const shoot = generator(prng(SEED).next, key)
    const problems: string[] = []
    const statuses = new Map<number, number>()
    const send = async (shot: Shot) => {
      const base = shot.server === 'api' ? urls.apiUrl : urls.siteUrl
      const response = await fetch(`${base}${shot.path}`, {
        method: shot.method,
        headers: shot.headers,
        body: shot.body,
      })
      const text = await response.text()
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
      const problem = (what: string) =>
        problems.push(
          `${what}: ${shot.method} ${shot.server}${shot.path} ${JSON.stringify(shot.headers).slice(0, 300)} → ${response.status} ${text.slice(0, 200)}`,
        )
      if (response.status >= 500) return problem('a 5xx')
      if (shot.server === 'api' && !response.headers.get('x-request-id')) problem('no x-request-id')
      if (response.status < 400) return
      const code = response.headers.get('x-service-error-code')
      let body: { error?: { code?: string; type?: string; message?: string } }
      try {
        body = JSON.parse(text)
      } catch {
        return problem('an error that is not JSON')
      }
      if (!code || !body.error?.message) return problem('an error without its code or message')
      // The Messages style names the code in `type`'s family and in the header; the others in `error.code`.
      if (body.error.code !== undefined && body.error.code !== code)
        problem('a body code unlike the header')
      if (shot.server === 'api' && response.headers.get('x-service-cost-usd') !== '0')
        problem('a refusal with a cost')
    }

    const settle = async () => {
      Bun.gc(true)
      await Bun.sleep(50)
      Bun.gc(true)
      return process.memoryUsage().heapUsed
    }
    // A first round warms up every path (compiled schemas, lazy modules) before memory is measured.
    for (let index = 0; index < 500; index += AT_ONCE)
      await Promise.all(Array.from({ length: AT_ONCE }, () => send(shoot())))
    const before = await settle()
    for (let index = 500; index < REQUESTS; index += AT_ONCE)
      await Promise.all(Array.from({ length: AT_ONCE }, () => send(shoot())))
    const after = await settle()

    if (problems.length > 0)
      console.error(
        `seed ${SEED}: ${problems.length} problems; first ones:\n${problems.slice(0, 10).join('\n')}`,
      )
    expect(problems).toEqual([])
    // Bodies, keys and paths were refused, and some requests got through: the run reached the stages
    // behind validation.
    expect({ 400: statuses.has(400), 401: statuses.has(401), 404: statuses.has(404) }).toEqual({
      400: true,
      401: true,
      404: true,
    })
    expect(statuses.get(200) ?? 0).toBeGreaterThan(0)
    expect(after - before).toBeLessThan(32 * 1024 * 1024)
  }, 240_000)
}

describe('malformed requests (embedded stores)', () =>
  malformed({ store: 'memory', database: 'embedded' }))
describeWith(['postgres', 'redis'], 'malformed requests (PostgreSQL and Redis)', () =>
  malformed({ store: 'redis', database: 'postgres' }),
)
