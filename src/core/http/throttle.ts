import type { Context, MiddlewareHandler } from 'hono'
import { TooManyRequestsError } from '../errors.ts'
import { clientAddress } from './client-ip.ts'
import { contextValue, setContextValue } from './context-value.ts'
import { RATE_LIMIT_HEADERS, setRateLimitHeaders } from './plain-response.ts'
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
    const lowest = contextValue<number>(c, TIGHTEST)
    const ours = lowest === undefined || result.remaining <= lowest
    const values = rateLimitValues(result)
    // Inside `plainResponses` the headers are recorded on the response being built; elsewhere
    // they are set now and checked again once the handler has answered.
    const recorded = ours && setRateLimitHeaders(c, values)
    if (ours) setContextValue(c, TIGHTEST, result.remaining)
    if (!result.allowed) throw new TooManyRequestsError(Math.max(result.resetSeconds, 1))
    await next()
    if (ours && !recorded && contextValue<number>(c, TIGHTEST) === result.remaining) {
      applyHeaders(c, values)
    }
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
    apiKey: contextValue<LimitedApiKey>(c, 'apiKey'),
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
const TIGHTEST = 'kiln.throttle.tightest'

function rateLimitValues(result: LimitResult): [string, string, string] {
  return [String(result.limit), String(result.remaining), String(result.resetSeconds)]
}

/** Handlers may return a fresh `Response` without the prepared headers: add them. */
function applyHeaders(c: Context, values: [string, string, string]): void {
  if (c.res.headers.has('RateLimit-Remaining')) return
  const set = (headers: Headers) =>
    RATE_LIMIT_HEADERS.forEach((name, i) => {
      headers.set(name, values[i]!)
    })
  try {
    set(c.res.headers)
  } catch {
    // Immutable headers (a Response from fetch): copy the response once.
    const copy = new Response(c.res.body, c.res)
    set(copy.headers)
    c.res = copy
  }
}
