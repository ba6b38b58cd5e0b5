import { BlockList, isIP } from 'node:net'

/**
 * Addresses a metadata-document fetch must never reach: loopback, private (RFC 1918, unique
 * local, the deprecated site-local `fec0::/10`), link-local (cloud metadata services live
 * there), carrier-grade NAT, unspecified, multicast, reserved, and IPv6 forms that embed an
 * IPv4 address (mapped, IPv4-compatible `::/96`, IPv4-translated `::ffff:0:0:0/96`, NAT64
 * well-known and local-use, 6to4, Teredo `2001::/32`): a host may route those to the IPv4
 * address inside (Teredo's, obfuscated, is the relay's or the client's).
 */
const blocked = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4')
}
for (const [network, prefix] of [
  // IPv4-compatible (RFC 4291 §2.5.5.1, deprecated); holds `::` and `::1` too.
  ['::', 96],
  // IPv4-translated (RFC 2765 §2.1, SIIT): ::ffff:0:a.b.c.d.
  ['::ffff:0:0:0', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  // Teredo (RFC 4380 §2.6): tunnels to an IPv4 server and client carried in the address.
  ['2001::', 32],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6')
}

const loopback = new BlockList()
loopback.addSubnet('127.0.0.0', 8, 'ipv4')
loopback.addAddress('::1', 'ipv6')

/** Whether a fetch may connect to this address; loopback only when explicitly allowed. */
export function isAllowedAddress(address: string, allowLoopback: boolean): boolean {
  // IPv4-mapped IPv6 (::ffff:a.b.c.d) is judged as the IPv4 address it carries. (A mapped
  // range in the IPv6 list would also match every IPv4 address: BlockList maps them.)
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1]
  if (mapped) return isAllowedAddress(mapped, allowLoopback)
  if (/^::ffff:[0-9a-f]{1,4}:[0-9a-f]{1,4}$/i.test(address)) return false
  const family = isIP(address)
  if (family === 0) return false
  const type = family === 4 ? 'ipv4' : 'ipv6'
  if (allowLoopback && loopback.check(address, type)) return true
  return !blocked.check(address, type)
}
