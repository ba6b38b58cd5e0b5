import { BlockList, isIP } from 'node:net'
import { getConnInfo } from '@hono/node-server/conninfo'
import type { Context } from 'hono'

/** The address used when a request has no socket (in-process `app.request()` calls). */
export const UNKNOWN_CLIENT = 'unknown'

/**
 * Which proxies the app believes. `false` reads the socket's address only. `true` trusts one
 * proxy in front of the app; a number n trusts n proxies: the client is then the n-th address
 * from the right of `X-Forwarded-For` (each proxy appends the address it saw; anything to the
 * left of that came from the client and may be forged). A list of addresses or CIDR ranges
 * trusts exactly those proxies: starting from the socket, hops are skipped from the right
 * while they are trusted, and the first untrusted hop is the client.
 */
export type TrustProxy = boolean | number | readonly string[]

/**
 * The client's IP address: the right-most hop not added by a trusted proxy. A request with no
 * socket and no trusted header (an in-process call) is `unknown`: such requests share one
 * rate-limit bucket instead of escaping the limit. The one client-IP reader of kiln: rate
 * limits, OAuth throttles and logins all ask it.
 */
export function clientAddress(c: Context, trustProxy: TrustProxy): string {
  // Believing no proxy (the default), the header is not even read.
  const forwardedFor = trustProxy === false ? undefined : c.req.header('X-Forwarded-For')
  return resolveClientAddress({ forwardedFor, socket: socketAddress(c) }, trustProxy)
}

/** `clientAddress` over plain data, for code that has no Hono context. */
export function resolveClientAddress(
  hops: { forwardedFor: string | undefined; socket: string | undefined },
  trustProxy: TrustProxy,
): string {
  const socket = hops.socket === undefined ? undefined : normalizeAddress(hops.socket)
  if (trustProxy === false || trustProxy === 0 || !hops.forwardedFor) {
    return socket ?? UNKNOWN_CLIENT
  }
  const chain = hops.forwardedFor
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
  if (Array.isArray(trustProxy)) {
    return fromTrustedList(chain, socket, trustedProxies(trustProxy)) ?? UNKNOWN_CLIENT
  }
  const count = trustProxy === true ? 1 : typeof trustProxy === 'number' ? trustProxy : 0
  if (count > 0 && chain.length > 0) {
    const candidate = chain[Math.max(chain.length - count, 0)]
    const address = candidate === undefined ? undefined : normalizeAddress(candidate)
    if (address) return address
  }
  return socket ?? UNKNOWN_CLIENT
}

function fromTrustedList(
  chain: string[],
  socket: string | undefined,
  trusted: BlockList,
): string | undefined {
  if (socket === undefined || !isTrusted(trusted, socket)) return socket
  let client = socket
  for (let index = chain.length - 1; index >= 0; index--) {
    const hop = normalizeAddress(chain[index] ?? '')
    // A hop that is no address was written by someone untrusted: the last good one answers.
    if (!hop) return client
    client = hop
    if (!isTrusted(trusted, hop)) return hop
  }
  return client
}

function isTrusted(list: BlockList, address: string): boolean {
  return list.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4')
}

const compiled = new WeakMap<readonly string[], BlockList>()

function trustedProxies(entries: readonly string[]): BlockList {
  let list = compiled.get(entries)
  if (!list) {
    list = parseTrustedProxies(entries)
    compiled.set(entries, list)
  }
  return list
}

/** Builds the allow-list of proxies; throws a TypeError naming the first bad entry. */
export function parseTrustedProxies(entries: readonly string[]): BlockList {
  const list = new BlockList()
  for (const entry of entries) {
    const [address = '', bits] = entry.trim().split('/')
    const normalized = normalizeAddress(address)
    const family = normalized && isIP(normalized) === 6 ? 'ipv6' : 'ipv4'
    const prefix = bits === undefined ? undefined : Number(bits)
    const maxPrefix = family === 'ipv6' ? 128 : 32
    if (
      !normalized ||
      (prefix !== undefined && (!Number.isInteger(prefix) || prefix < 0 || prefix > maxPrefix))
    ) {
      throw new TypeError(
        `trustProxy: ${JSON.stringify(entry)} is not an IP address or CIDR range (e.g. 10.0.0.0/8)`,
      )
    }
    if (prefix === undefined) list.addAddress(normalized, family)
    else list.addSubnet(normalized, prefix, family)
  }
  return list
}

/** Checks a `TrustProxy` value at start-up: a TypeError that says what to set. */
export function checkTrustProxy(value: TrustProxy, owner: string): void {
  if (typeof value === 'boolean') return
  if (typeof value === 'number') {
    if (Number.isInteger(value) && value >= 0) return
    throw new TypeError(`${owner}: trustProxy must be a boolean, a number of proxies or a list`)
  }
  if (Array.isArray(value)) {
    trustedProxies(value)
    return
  }
  throw new TypeError(`${owner}: trustProxy must be a boolean, a number of proxies or a list`)
}

function socketAddress(c: Context): string | undefined {
  // No Node.js socket (an in-process `app.request()`, another runtime's adapter): checked
  // first, because building the exception getConnInfo would throw costs more than the rest.
  const env = c.env as { server?: { incoming?: unknown }; incoming?: unknown } | undefined
  if (!(env?.server ?? env)?.incoming) return undefined
  return getConnInfo(c).remote.address
}

/** A valid IP address in canonical form (IPv4-mapped IPv6 becomes IPv4), or undefined. */
export function normalizeAddress(value: string): string | undefined {
  let address = value.trim()
  if (address.startsWith('[') && address.includes(']'))
    address = address.slice(1, address.indexOf(']'))
  const zone = address.indexOf('%')
  if (zone >= 0) address = address.slice(0, zone)
  const version = isIP(address)
  if (version === 4) return address
  if (version !== 6) return undefined
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped?.[1]) return mapped[1]
  return address.toLowerCase()
}

/**
 * The rate-limit key for an address: `ip:<v4>`, or `ip:<first 64 bits>::/64` for IPv6, since
 * one IPv6 client usually holds a whole /64 and could otherwise rotate through it.
 */
export function addressKey(address: string): string {
  if (isIP(address) !== 6) return `ip:${address}`
  const groups = expandIpv6(address)
  return `ip:${groups.slice(0, 4).join(':')}::/64`
}

function expandIpv6(address: string): string[] {
  let text = address
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number]
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head = '', tail] = text.split('::')
  const left = head === '' ? [] : head.split(':')
  const right = tail === undefined || tail === '' ? [] : tail.split(':')
  const fill = tail === undefined ? [] : Array(8 - left.length - right.length).fill('0')
  return [...left, ...fill, ...right].map((group) => Number.parseInt(group, 16).toString(16))
}
