/**
 * Which push endpoints the server sends to. Push services are on the internet, so only https URLs whose
 * host is public are accepted: by its name and literal address, and by every address the name resolves
 * to. The check runs when a browser registers its subscription and again before each send, since a name
 * can be pointed at another address after it was registered. Loopback and private addresses only with
 * PUSH_ALLOW_PRIVATE_ENDPOINTS, for local testing.
 */
import { lookup } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'
import { ServiceError } from '../../../shared/errors.ts'

export type Resolve = (hostname: string) => Promise<readonly { address: string }[]>

const resolveAll: Resolve = (hostname) => lookup(hostname, { all: true, verbatim: true })

/**
 * Loopback, private, link-local, shared, benchmark, multicast and reserved ranges of both families. An
 * IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) is checked against the IPv4 ranges by the list itself.
 */
const NOT_PUBLIC = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const)
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv4')
for (const [network, prefix] of [
  ['::', 127],
  ['64:ff9b::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv6')

const NOT_PUBLIC_NAME = /^(localhost|.+\.(localhost|local|internal))$/

const refusal = (message: string) =>
  new ServiceError('invalid_request', `endpoint: ${message}`, { param: 'endpoint' })

export async function checkPushEndpoint(
  endpoint: string,
  allowPrivate: boolean,
  resolve: Resolve = resolveAll,
): Promise<void> {
  let url: URL
  try {
    url = new URL(endpoint)
  } catch {
    throw refusal('not a URL.')
  }
  if (allowPrivate && (url.protocol === 'https:' || url.protocol === 'http:')) return
  if (url.protocol !== 'https:') throw refusal('push endpoints must be https URLs.')
  const notPublic = refusal('must be a public push service, not a local or private address.')
  // A name may end in the root's dot (`localhost.`), which names the same host.
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '')
  if (NOT_PUBLIC_NAME.test(host)) throw notPublic
  // Push services are named by host name; an address literal is accepted only when public.
  let addresses: readonly { address: string }[]
  if (isIP(host)) addresses = [{ address: host }]
  else {
    try {
      addresses = await resolve(host)
    } catch {
      throw refusal(`its host ${host} does not resolve.`)
    }
  }
  if (addresses.length === 0 || addresses.some(({ address }) => !isPublic(address))) throw notPublic
}

function isPublic(address: string): boolean {
  const family = isIP(address)
  return family !== 0 && !NOT_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6')
}
