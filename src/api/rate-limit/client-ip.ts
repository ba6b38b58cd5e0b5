import { isIP } from 'node:net'
import { getConnInfo } from '@hono/node-server/conninfo'
import type { Context } from 'hono'

/** The address used when a request has no socket (in-process `app.request()` calls). */
export const UNKNOWN_CLIENT = 'unknown'

/**
 * `trustProxy`: false reads the socket's address only. true trusts one proxy in front of the
 * app; a number n trusts n proxies. With n trusted proxies the client is the n-th address
 * from the right of `X-Forwarded-For` (each proxy appends the address it saw; anything to
 * the left of that came from the client and may be forged).
 */
export type TrustProxy = boolean | number

/**
 * The client's IP address: from the socket, or from `X-Forwarded-For` only when the app
 * trusts its proxy. A request with neither (an in-process call) is `unknown`: such requests
 * share one rate-limit bucket instead of escaping the limit.
 */
export function clientAddress(c: Context, trustProxy: TrustProxy): string {
  const hops = trustProxy === true ? 1 : typeof trustProxy === 'number' ? trustProxy : 0
  if (hops > 0) {
    const forwarded = c.req.header('X-Forwarded-For')
    if (forwarded) {
      const chain = forwarded
        .split(',')
        .map((part) => part.trim())
        .filter(Boolean)
      const candidate = chain[Math.max(chain.length - hops, 0)]
      const address = candidate === undefined ? undefined : normalizeAddress(candidate)
      if (address) return address
    }
  }
  return normalizeAddress(socketAddress(c) ?? '') ?? UNKNOWN_CLIENT
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
