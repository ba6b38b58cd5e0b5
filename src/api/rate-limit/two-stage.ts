// The rate limits and the body limit live in kiln/core (one throttle for the API, OAuth and
// logins) and are exported from there only; this folder holds the API's own two-stage throttle.
import type { Context, MiddlewareHandler } from 'hono'
import { UnauthenticatedError } from '../../core/errors.ts'
import { contextValue, setContextValue } from '../../core/http/context-value.ts'
import type { LimitRequest, LimitResult, RateLimiters } from '../../core/http/rate-limiters.ts'
import {
  answerLimit,
  countRequest,
  limitRequest,
  sendRateLimitHeaders,
  type UnsentRateLimit,
} from '../../core/http/throttle.ts'

/** The two places a limiter runs around `apiKeyAuth`. */
export interface TwoStageThrottle {
  /** Before `apiKeyAuth`: counts the request before its key is checked (`reserveKeyCheck`). */
  beforeAuth: MiddlewareHandler
  /** After `apiKeyAuth`: counts the accepted key's request in its own bucket. */
  afterAuth: MiddlewareHandler
}

/**
 * One named limiter in two stages around `apiKeyAuth`, so a limiter that buckets by key
 * (`r.apiKey ? { key: \`key:${r.apiKey.id}\`, … } : perIp(r, 60)`) sees the key, while requests
 * without a valid key are still limited per client IP.
 *
 * Each request is counted once, and before its key is checked, as `apiGuard` does
 * (`reserveKeyCheck`, `settleKeyCheck`): a burst of bad keys meets 429 once its bucket is spent,
 * however many arrive at once. With a per-IP limiter (the default) this is the same 60 requests
 * per minute per IP as a single throttle before auth.
 * @example
 * ```ts
 * const limit = twoStageThrottle(limiters, 'api')
 * app.use('/api/v1/*', limit.beforeAuth, apiKeyAuth({ provider: apiKeys }), limit.afterAuth)
 * ```
 */
export function twoStageThrottle(limiters: RateLimiters, name: string): TwoStageThrottle {
  const fallback = throttleAlone(limiters, name)
  return {
    beforeAuth: async function throttleBeforeKeyCheck(c, next) {
      const reservation = await reserveKeyCheck(c, limiters, name)
      setContextValue(c, RESERVATION, reservation)
      let failure: unknown
      try {
        await next()
      } catch (error) {
        failure = error
      }
      // Not settled by `afterAuth`: the key check failed. Inside a group with its own error
      // handler the 401 is already a response here, its error in `c.error`.
      if (contextValue(c, RESERVATION) === reservation) {
        setContextValue(c, RESERVATION, undefined)
        const refusal = failure ?? c.error ?? new Error('the key check never ran')
        const unsent = await settleKeyCheck(c, limiters, name, reservation, refusal)
        if (unsent !== undefined) sendRateLimitHeaders(c, unsent)
      }
      if (failure !== undefined) throw failure
    },
    afterAuth: async function throttleAcceptedKey(c, next) {
      const reservation = contextValue<Reservation>(c, RESERVATION)
      if (reservation === undefined) return fallback(c, next)
      setContextValue(c, RESERVATION, undefined)
      const unsent = await settleKeyCheck(c, limiters, name, reservation)
      await next()
      if (unsent !== undefined) sendRateLimitHeaders(c, unsent)
    },
  }
}

/** `afterAuth` without `beforeAuth` in front: a throttle by key alone. */
function throttleAlone(limiters: RateLimiters, name: string): MiddlewareHandler {
  return async (c, next) => {
    const unsent = await countRequest(c, limiters, name)
    await next()
    if (unsent !== undefined) sendRateLimitHeaders(c, unsent)
  }
}

const RESERVATION = 'kiln.api.keyCheckReservation'

/** A request counted before its key was checked, in the bucket of a request without a key. */
export interface Reservation {
  anonymous: LimitRequest
  result: LimitResult
}

/**
 * Before the key check: counts the request in the limiter's bucket for a request without a key
 * (per client IP for the built-in `api` limiter). Counting first is what bounds a burst:
 * counted after the check, every request of the burst was checked while the count caught up.
 * When that bucket is spent the answer is 429 at once, no key checked, unless the limiter gives
 * keys buckets of their own (a function definition): then a valid key still counts in its own
 * bucket and only a refused one meets the 429 (`settleKeyCheck`).
 */
export async function reserveKeyCheck(
  c: Context,
  limiters: RateLimiters,
  name: string,
): Promise<Reservation> {
  const anonymous = limitRequest(c, limiters)
  const result = await limiters.consume(name, anonymous)
  if (!result.allowed && !limiters.bucketsByKey(name)) answerLimit(c, result)
  return { anonymous, result }
}

/**
 * After the key check: a refused key (401, `error` given) keeps the count made before it and
 * answers with its headers, or 429 when that count was past the limit; an accepted key counts
 * in its own bucket (the reservation is that count when both are one bucket, else it is given
 * back); a 403 (missing scope) or a failing key store is not counted.
 */
export async function settleKeyCheck(
  c: Context,
  limiters: RateLimiters,
  name: string,
  reservation: Reservation,
  error?: unknown,
): Promise<UnsentRateLimit | undefined> {
  if (error === undefined) {
    const keyed = limitRequest(c, limiters)
    if (limiters.bucketOf(name, keyed) === limiters.bucketOf(name, reservation.anonymous)) {
      return answerLimit(c, reservation.result)
    }
  } else if (error instanceof UnauthenticatedError) {
    return answerLimit(c, reservation.result)
  }
  await limiters.refund(name, reservation.anonymous)
  return error === undefined ? countRequest(c, limiters, name) : undefined
}
