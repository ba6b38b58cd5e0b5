import type { Context, MiddlewareHandler } from 'hono'
import { TooManyRequestsError } from '../errors.ts'
import { clientAddress } from './client-ip.ts'
import type { LimitedApiKey, LimitRequest, LimitResult, RateLimiters } from './rate-limiters.ts'

/**
 * The one throttle of kiln: the API, the OAuth server and logins all count through it.
 * Counts each request against the named limiter. Every response carries `RateLimit-Limit`,
 * `RateLimit-Remaining` and `RateLimit-Reset` (seconds); over the limit the request is
 * refused with 429 `{ "error": "Too Many Requests" }` and `Retry-After`. When several
 * throttles apply, the headers describe the one with the fewest requests left.
 * Put it before `apiKeyAuth` to limit by address, after it to limit by key.
 */
export function throttle(limiters: RateLimiters, name: string): MiddlewareHandler {
  if (!limiters || typeof limiters.consume !== 'function') {
    throw new TypeError('throttle: pass the result of createRateLimiters()')
  }
  if (!limiters.has(name)) {
    throw new TypeError(
      `throttle: no rate limiter named ${JSON.stringify(name)} (defined: ${limiters.names().join(', ')})`,
    )
  }
  return async function throttleMiddleware(c, next) {
    const result = await limiters.consume(name, limitRequest(c, limiters))
    const headers = rateLimitHeaders(result)
    const lowest = tightest.get(c)
    const ours = lowest === undefined || result.remaining <= lowest
    if (ours) {
      tightest.set(c, result.remaining)
      for (const [header, value] of headers) c.header(header, value)
    }
    if (!result.allowed) throw new TooManyRequestsError(Math.max(result.resetSeconds, 1))
    await next()
    if (ours && tightest.get(c) === result.remaining) applyHeaders(c, headers)
  }
}

/** What the limiters see of a request: its client address, its API key, its route. */
export function limitRequest(
  c: Context,
  limiters: Pick<RateLimiters, 'trustProxy'>,
  subject?: string,
): LimitRequest {
  return {
    ip: clientAddress(c, limiters.trustProxy),
    apiKey: (c.get as (key: string) => unknown)('apiKey') as LimitedApiKey | undefined,
    method: c.req.method,
    path: c.req.path,
    subject,
  }
}

/** Refuses with 429 (and `Retry-After`) when a limiter says no; for counts made in handlers. */
export function assertAllowed(result: LimitResult): void {
  if (!result.allowed) throw new TooManyRequestsError(Math.max(result.resetSeconds, 1))
}

/** The fewest remaining requests any throttle of this request reported. */
const tightest = new WeakMap<Context, number>()

function rateLimitHeaders(result: LimitResult): [string, string][] {
  return [
    ['RateLimit-Limit', String(result.limit)],
    ['RateLimit-Remaining', String(result.remaining)],
    ['RateLimit-Reset', String(result.resetSeconds)],
  ]
}

/** Handlers may return a fresh `Response` without the prepared headers: add them. */
function applyHeaders(c: Context, headers: [string, string][]): void {
  if (c.res.headers.has('RateLimit-Remaining')) return
  try {
    for (const [header, value] of headers) c.res.headers.set(header, value)
  } catch {
    // Immutable headers (a Response from fetch): copy the response once.
    const copy = new Response(c.res.body, c.res)
    for (const [header, value] of headers) copy.headers.set(header, value)
    c.res = copy
  }
}
