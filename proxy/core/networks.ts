/**
 * Lists of networks in CIDR notation (`10.0.0.0/8`, `fd00::/8`, or a single address), as settings
 * name them: parsed once into a `BlockList`, with a problem for each entry that is not one.
 */
import { BlockList, isIP } from 'node:net'

export type Networks = { list: BlockList; entries: string[] }

export function parseNetworks(text: string): { networks: Networks; problems: string[] } {
  const list = new BlockList()
  const entries: string[] = []
  const problems: string[] = []
  for (const entry of text.split(/[\s,]+/).filter(Boolean)) {
    const [address = '', prefix, extra] = entry.split('/')
    const family = isIP(address)
    const bits = family === 4 ? 32 : 128
    const length =
      prefix === undefined ? bits : /^\d{1,3}$/.test(prefix) ? Number(prefix) : Number.NaN
    if (family === 0 || extra !== undefined || !(length >= 0 && length <= bits)) {
      problems.push(`${JSON.stringify(entry)} is not an address or a network in CIDR notation`)
      continue
    }
    list.addSubnet(address, length, family === 4 ? 'ipv4' : 'ipv6')
    entries.push(entry)
  }
  return { networks: { list, entries }, problems }
}

/** Whether an address (IPv4, IPv6 or IPv4-mapped IPv6) is in the networks. */
export function inNetworks(networks: Networks, address: string): boolean {
  const family = isIP(address)
  return family !== 0 && networks.list.check(address, family === 4 ? 'ipv4' : 'ipv6')
}
