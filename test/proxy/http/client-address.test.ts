// The client address behind proxies: trusted only from a trusted peer, the right-most untrusted hop of
// X-Forwarded-For or Forwarded, the socket address for anything unreadable. Real HTTP requests against
// listening servers show it on the per-address limits themselves (invalid keys on the API server, wrong
// dashboard links on the site server), on embedded and on real stores; an IPv6 client is counted by /64.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { loadConfig } from '../../../proxy/core/config.ts'
import { addressTrust, clientAddress } from '../../../proxy/http/client-address.ts'
import { addressBucket } from '../../../proxy/stores/address-limits.ts'
import { startTestGateway, type TestGateway } from '../../helpers/gateway.ts'
import { describeWith } from '../../helpers/services.ts'

const trustOf = (proxies: string, header = 'auto') =>
  addressTrust(loadConfig({ TRUSTED_PROXIES: proxies, TRUSTED_PROXY_HEADER: header }))
const from = (peer: string, headers: Record<string, string> = {}) => ({
  server: { requestIP: () => ({ address: peer }) },
  request: new Request('http://gateway.test/', { headers }),
})

describe('clientAddress', () => {
  const trust = trustOf('10.0.0.0/8, 127.0.0.1, fd00::/8')
  const address = (peer: string, headers: Record<string, string> = {}, with_ = trust) => {
    const { server, request } = from(peer, headers)
    return clientAddress(server, request, with_)
  }

  test('without trusted proxies, the socket address, whatever the headers say', () => {
    expect(address('203.0.113.1', { 'x-forwarded-for': '198.51.100.1' }, trustOf(''))).toBe(
      '203.0.113.1',
    )
    expect(address('::ffff:203.0.113.1', {}, trustOf(''))).toBe('203.0.113.1')
  })

  test('an untrusted peer cannot name another address', () => {
    expect(address('203.0.113.1', { 'x-forwarded-for': '198.51.100.1' })).toBe('203.0.113.1')
    expect(address('203.0.113.1', { forwarded: 'for=198.51.100.1' })).toBe('203.0.113.1')
  })

  test('a trusted peer: the right-most hop that is not a trusted proxy', () => {
    expect(address('10.0.0.5', { 'x-forwarded-for': '198.51.100.1' })).toBe('198.51.100.1')
    // The client wrote the left-most entry; the proxies appended the rest.
    expect(address('10.0.0.5', { 'x-forwarded-for': '1.1.1.1, 198.51.100.1, 10.0.0.9' })).toBe(
      '198.51.100.1',
    )
    expect(address('::ffff:10.0.0.5', { 'x-forwarded-for': '198.51.100.1:5678' })).toBe(
      '198.51.100.1',
    )
    // Every hop a trusted proxy: the request began inside.
    expect(address('10.0.0.5', { 'x-forwarded-for': '10.1.1.1, 10.2.2.2' })).toBe('10.1.1.1')
    expect(address('10.0.0.5')).toBe('10.0.0.5')
  })

  test('what a per-address limit counts: IPv4 as is, IPv6 by its /64, anything else as given', () => {
    for (const [address, bucket] of [
      ['192.0.2.1', '192.0.2.1'],
      ['::ffff:192.0.2.1', '192.0.2.1'],
      ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
      ['2001:0DB8:0001:0002::7', '2001:db8:1:2::/64'],
      ['fe80::1%eth0', 'fe80:0:0:0::/64'],
      ['::1', '0:0:0:0::/64'],
      ['1::2::3', '1::2::3'],
      ['unknown', 'unknown'],
    ] as const)
      expect([address, addressBucket(address)]).toEqual([address, bucket])
  })

  test('IPv6 hops, bare or in brackets with a port', () => {
    expect(address('fd00::1', { 'x-forwarded-for': '2001:DB8::7' })).toBe('2001:db8::7')
    expect(address('fd00::1', { 'x-forwarded-for': '[2001:db8::7]:443, fd00::2' })).toBe(
      '2001:db8::7',
    )
    expect(address('fd00::1', { 'x-forwarded-for': '::ffff:198.51.100.3' })).toBe('198.51.100.3')
  })

  test('Forwarded (RFC 7239): for= of each element, quoted or not, with other parameters', () => {
    expect(address('10.0.0.5', { forwarded: 'for=198.51.100.1;proto=https;by=10.0.0.5' })).toBe(
      '198.51.100.1',
    )
    expect(
      address('10.0.0.5', { forwarded: 'for=1.1.1.1, for="[2001:db8:cafe::17]:4711";proto=https' }),
    ).toBe('2001:db8:cafe::17')
    expect(address('10.0.0.5', { forwarded: 'For="198.51.100.2:80", for=10.0.0.7' })).toBe(
      '198.51.100.2',
    )
  })

  test('which header: auto reads X-Forwarded-For when present; a named header only that one', () => {
    const both = { 'x-forwarded-for': '198.51.100.1', forwarded: 'for=198.51.100.2' }
    expect(address('10.0.0.5', both)).toBe('198.51.100.1')
    expect(address('10.0.0.5', both, trustOf('10.0.0.0/8', 'forwarded'))).toBe('198.51.100.2')
    expect(
      address(
        '10.0.0.5',
        { forwarded: 'for=198.51.100.2' },
        trustOf('10.0.0.0/8', 'x-forwarded-for'),
      ),
    ).toBe('10.0.0.5')
  })

  test('anything unreadable falls back to the socket address', () => {
    for (const header of [
      'not-an-ip',
      '198.51.100.1, ',
      '',
      ',',
      '[2001:db8::1',
      '[2001:db8::1]x',
      '999.1.1.1',
      '198.51.100.1:99999',
      'x'.repeat(10_000),
    ]) {
      expect(address('10.0.0.5', { 'x-forwarded-for': header })).toBe('10.0.0.5')
    }
    for (const header of [
      'for=unknown',
      'for=_hidden',
      'proto=https',
      'for="198.51.100.1',
      'for=',
      ';;;',
      'for="[::1]:80"x',
    ]) {
      expect(address('10.0.0.5', { forwarded: header })).toBe('10.0.0.5')
    }
  })

  test('a list that is not networks is refused at start, naming the entry', () => {
    expect(() =>
      loadConfig({ TRUSTED_PROXIES: '10.0.0.0/8, 10.0.0.0/40, proxy.internal' }),
    ).toThrow(/TRUSTED_PROXIES: "10.0.0.0\/40".*\n.*"proxy.internal"/)
    expect(() => loadConfig({ TRUSTED_PROXY_HEADER: 'x-real-ip' })).toThrow(/TRUSTED_PROXY_HEADER/)
  })
})

/** Requests with an invalid key through the listening API server, as one address: the statuses. */
async function invalidKeyStatuses(
  apiUrl: string,
  count: number,
  headers: Record<string, string> = {},
): Promise<number[]> {
  const statuses: number[] = []
  for (let index = 0; index < count; index++) {
    const response = await fetch(`${apiUrl}/v1/models`, {
      headers: { authorization: 'Bearer sk-not-a-key', ...headers },
    })
    await response.body?.cancel()
    statuses.push(response.status)
  }
  return statuses
}

function behindProxies(stores: { store: 'memory' | 'redis'; database: 'postgres' | 'embedded' }) {
  let trusting: TestGateway
  let untrusting: TestGateway
  let trustingUrls: { apiUrl: string; siteUrl: string }
  let untrustingUrl: string
  beforeAll(async () => {
    const env = { INVALID_KEYS_PER_MINUTE: '2', SIGN_IN_ATTEMPTS_PER_MINUTE: '2' }
    trusting = await startTestGateway({
      ...stores,
      env: { ...env, TRUSTED_PROXIES: '127.0.0.1, 10.0.0.0/8' },
    })
    trustingUrls = trusting.app.listen()
    // Its proxies are elsewhere: this test's connections come from an untrusted peer.
    untrusting = await startTestGateway({
      ...stores,
      env: { ...env, TRUSTED_PROXIES: '10.0.0.0/8' },
    })
    untrustingUrl = untrusting.app.listen().apiUrl
  })
  afterAll(async () => {
    await trusting?.close()
    await untrusting?.close()
  })

  test('behind a trusted proxy each client has its own budget; a forged left-most entry changes nothing', async () => {
    expect(
      await invalidKeyStatuses(trustingUrls.apiUrl, 3, { 'x-forwarded-for': '198.51.100.10' }),
    ).toEqual([401, 401, 429])
    // Another client behind the same proxy is not affected.
    expect(
      await invalidKeyStatuses(trustingUrls.apiUrl, 1, { 'x-forwarded-for': '198.51.100.11' }),
    ).toEqual([401])
    // The first client again, through a second proxy hop and with a forged entry on the left.
    expect(
      await invalidKeyStatuses(trustingUrls.apiUrl, 1, {
        'x-forwarded-for': '203.0.113.99, 198.51.100.10, 10.0.0.3',
      }),
    ).toEqual([429])
    expect(
      await invalidKeyStatuses(trustingUrls.apiUrl, 1, {
        forwarded: 'for=198.51.100.10;proto=https',
      }),
    ).toEqual([429])
  })

  test('an IPv6 client is counted by its /64: another address of it shares the budget, another /64 does not', async () => {
    expect(
      await invalidKeyStatuses(trustingUrls.apiUrl, 2, { 'x-forwarded-for': '2001:db8:5:6::1' }),
    ).toEqual([401, 401])
    expect(
      await invalidKeyStatuses(trustingUrls.apiUrl, 1, {
        'x-forwarded-for': '2001:db8:5:6:ffff:1:2:3',
      }),
    ).toEqual([429])
    expect(
      await invalidKeyStatuses(trustingUrls.apiUrl, 1, { 'x-forwarded-for': '2001:db8:5:7::1' }),
    ).toEqual([401])
  })

  test('a malformed header is the proxy itself, never an error', async () => {
    expect(
      await invalidKeyStatuses(trustingUrls.apiUrl, 3, { 'x-forwarded-for': 'garbage, ,' }),
    ).toEqual([401, 401, 429])
    // The proxy's own address is what it fell back to.
    expect(await invalidKeyStatuses(trustingUrls.apiUrl, 1)).toEqual([429])
    expect(
      await invalidKeyStatuses(trustingUrls.apiUrl, 1, { 'x-forwarded-for': '198.51.100.12' }),
    ).toEqual([401])
  })

  test('from an untrusted peer, a forged X-Forwarded-For is ignored: one budget for the socket address', async () => {
    const forged = ['198.51.100.20', '198.51.100.21', '198.51.100.22'].map((address) => ({
      'x-forwarded-for': address,
    }))
    const statuses = []
    for (const headers of forged)
      statuses.push(...(await invalidKeyStatuses(untrustingUrl, 1, headers)))
    expect(statuses).toEqual([401, 401, 429])
  })

  test('the site server’s limits use the same address', async () => {
    const wrongLink = (address: string) =>
      fetch(`${trustingUrls.siteUrl}/admin/v1/session/link`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          origin: trustingUrls.siteUrl,
          'x-forwarded-for': address,
        },
        body: JSON.stringify({ secret: 'wrong' }),
      }).then((response) => response.status)
    expect([
      await wrongLink('2001:db8::30'),
      await wrongLink('2001:db8::30'),
      await wrongLink('[2001:DB8::30]:1234'),
    ]).toEqual([401, 401, 429])
    // Another /64: another client.
    expect(await wrongLink('2001:db8:0:1::31')).toBe(401)
  })
}

describe('client address behind proxies (embedded stores)', () =>
  behindProxies({ store: 'memory', database: 'embedded' }))
describeWith(['postgres', 'redis'], 'client address behind proxies (PostgreSQL and Redis)', () =>
  behindProxies({ store: 'redis', database: 'postgres' }),
)

describe('client address over IPv6', () => {
  let gw: TestGateway
  let apiUrl: string
  beforeAll(async () => {
    gw = await startTestGateway({
      store: 'memory',
      database: 'embedded',
      env: { HOST: '::1', INVALID_KEYS_PER_MINUTE: '2', TRUSTED_PROXIES: '::1' },
    })
    apiUrl = gw.app.listen().apiUrl
  })
  afterAll(async () => {
    await gw?.close()
  })

  test('a trusted IPv6 peer forwarding for IPv6 and IPv4 clients', async () => {
    expect(apiUrl).toContain('[::1]')
    expect(await invalidKeyStatuses(apiUrl, 3, { 'x-forwarded-for': '2001:db8::40' })).toEqual([
      401, 401, 429,
    ])
    expect(await invalidKeyStatuses(apiUrl, 1, { forwarded: 'for="[2001:db8::40]"' })).toEqual([
      429,
    ])
    expect(await invalidKeyStatuses(apiUrl, 1, { 'x-forwarded-for': '198.51.100.40' })).toEqual([
      401,
    ])
  })
})
