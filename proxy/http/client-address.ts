/**
 * The client address of a request, for the per-address limits. Without trusted proxies it is the socket
 * address. When the socket peer is one of `TRUSTED_PROXIES`, it is the right-most address of the
 * forwarding header that is not itself a trusted proxy: each proxy appends the address it received the
 * request from, so everything left of the nearest untrusted hop could have been written by the client.
 * A header that cannot be read (a hop that is not an address, `unknown`, an obfuscated name) never fails
 * the request: the address is then the socket's, which is what an operator without the setting gets.
 */
import { isIP } from 'node:net'
import type { Config } from '../core/config.ts'
import { inNetworks, type Networks } from '../core/networks.ts'

export type AddressTrust = { proxies: Networks; header: Config['TRUSTED_PROXY_HEADER'] }

type Server = { requestIP(request: Request): { address: string } | null } | null

export function addressTrust(
  config: Pick<Config, 'trustedProxies' | 'TRUSTED_PROXY_HEADER'>,
): AddressTrust {
  return { proxies: config.trustedProxies, header: config.TRUSTED_PROXY_HEADER }
}

export function clientAddress(server: Server, request: Request, trust: AddressTrust): string {
  const peer = server?.requestIP(request)?.address
  if (peer === undefined) return 'unknown'
  const socket = plainAddress(peer)
  if (trust.proxies.entries.length === 0 || !inNetworks(trust.proxies, socket)) return socket
  const hops = forwardedHops(request.headers, trust.header)
  if (hops === undefined || hops.length === 0) return socket
  for (let index = hops.length - 1; index >= 0; index--) {
    const hop = hops[index]
    if (hop === undefined) return socket
    if (!inNetworks(trust.proxies, hop)) return hop
  }
  // Every hop is a trusted proxy: the request began inside; the left-most hop is where.
  return hops[0]!
}

/** The addresses of the forwarding header, left to right; undefined for a hop that is not an address. */
function forwardedHops(
  headers: Headers,
  header: AddressTrust['header'],
): (string | undefined)[] | undefined {
  const xForwardedFor = header === 'forwarded' ? null : headers.get('x-forwarded-for')
  if (xForwardedFor !== null) return xForwardedFor.split(',').map((hop) => hopAddress(hop.trim()))
  const forwarded = header === 'x-forwarded-for' ? null : headers.get('forwarded')
  if (forwarded !== null) return splitOutsideQuotes(forwarded, ',').map(forwardedFor)
  return undefined
}

/** The `for=` parameter of one RFC 7239 element (`for=192.0.2.60;proto=http`, `for="[2001:db8::17]:4711"`). */
function forwardedFor(element: string): string | undefined {
  for (const pair of splitOutsideQuotes(element, ';')) {
    const equals = pair.indexOf('=')
    if (equals < 0 || pair.slice(0, equals).trim().toLowerCase() !== 'for') continue
    let value = pair.slice(equals + 1).trim()
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"'))
      value = value.slice(1, -1).replace(/\\(.)/g, '$1')
    return hopAddress(value)
  }
  return undefined
}

/** An address as a proxy may write it: bare, IPv6 in brackets, either with a port. */
function hopAddress(text: string): string | undefined {
  if (text.startsWith('[')) {
    const end = text.indexOf(']')
    const port = text.slice(end + 1)
    if (end < 0 || (port !== '' && !(port.startsWith(':') && isPort(port.slice(1)))))
      return undefined
    text = text.slice(1, end)
  } else if (/^[\d.]+:\d+$/.test(text)) {
    const colon = text.lastIndexOf(':')
    if (!isPort(text.slice(colon + 1))) return undefined
    text = text.slice(0, colon)
  }
  return isIP(text) === 0 ? undefined : plainAddress(text)
}

const isPort = (text: string) => /^\d{1,5}$/.test(text) && Number(text) <= 65535

/** IPv4 for an IPv4-mapped IPv6 address, so one client has one address whichever way it arrived. */
function plainAddress(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4
    ? address.slice(7)
    : address.toLowerCase()
}

function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = []
  let quoted = false
  let start = 0
  for (let index = 0; index < text.length; index++) {
    const char = text[index]
    if (char === '\\' && quoted) index++
    else if (char === '"') quoted = !quoted
    else if (char === separator && !quoted) {
      parts.push(text.slice(start, index).trim())
      start = index + 1
    }
  }
  parts.push(text.slice(start).trim())
  return parts
}
