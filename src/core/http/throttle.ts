import type { Context, MiddlewareHandler } from 'hono'
import { TooManyRequestsError } from '../errors.ts'
import { clientAddress } from './client-ip.ts'
import { contextValue, setContextValue } from './context-value.ts'
import { RATE_LIMIT_HEADERS, setRateLimitHeaders } from './plain-response.ts'
import type { LimitedApiKey, LimitRequest, LimitResult, RateLimiters } from './rate-limiters.ts'
import { editResponseHeaders } from './response-headers.ts'

/**
 * The one throttle of kiln: the API, the OAuth server and logins all count through it.
 * Counts each request against the named limiter. Every response carries `RateLimit-Limit`,
 * `RateLimit-Remaining` and `RateLimit-Reset` (seconds); over the limit the request is
 * refused with 429 `{ "error": "Too Many Requests" }` and `Retry-After`. When several
 * throttles apply, the headers describe the one with the fewest requests left.
 * Put it before `apiKeyAuth` to limit by address, after it to limit by key.
 * @example
 * ```ts
 * app.use('/api/*', throttle(limiters, 'api'))
 * ```
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
    const unsent = await countRequest(c, limiters, name)
    await next()
    if (unsent !== undefined) sendRateLimitHeaders(c, unsent)
  }
}

/** `RateLimit-*` values a throttle could not record on the answer before the handler ran. */
export interface UnsentRateLimit {
  remaining: number
  values: [string, string, string]
}

/**
 * What `throttle` does before the handler: counts the request against the named limiter,
 * records its headers when it is the tightest so far, and throws `TooManyRequestsError`
 * (429) over the limit. Returns the headers still to set once the handler answered (outside
 * `plainResponses`), for `sendRateLimitHeaders`.
 */
export async function countRequest(
  c: Context,
  limiters: RateLimiters,
  name: string,
): Promise<UnsentRateLimit | undefined> {
  return answerLimit(c, await limiters.consume(name, limitRequest(c, limiters)))
}

/**
 * What `countRequest` does with a count it made: the headers of the tightest throttle on the
 * answer, and 429 (with `Retry-After`) when the count was refused. For a count made earlier,
 * before it was known which answer it belongs to (the API's refused keys).
 */
export function answerLimit(c: Context, result: LimitResult): UnsentRateLimit | undefined {
  const lowest = contextValue<number>(c, TIGHTEST)
  const ours = lowest === undefined || result.remaining <= lowest
  let unsent: UnsentRateLimit | undefined
  if (ours) {
    const values = rateLimitValues(result)
    // Inside `plainResponses` the headers are recorded on the response being built; elsewhere
    // they are set now and checked again once the handler has answered.
    if (!setRateLimitHeaders(c, values)) unsent = { remaining: result.remaining, values }
    setContextValue(c, TIGHTEST, result.remaining)
  }
  if (!result.allowed) throw new TooManyRequestsError(Math.max(result.resetSeconds, 1))
  return unsent
}

/** After the handler: sets the headers `countRequest` could not record, unless a tighter throttle took over. */
export function sendRateLimitHeaders(c: Context, unsent: UnsentRateLimit): void {
  if (contextValue<number>(c, TIGHTEST) === unsent.remaining) applyHeaders(c, unsent.values)
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
  editResponseHeaders(c, (headers) =>
    RATE_LIMIT_HEADERS.forEach((name, i) => {
      headers.set(name, values[i]!)
    }),
  )
}
