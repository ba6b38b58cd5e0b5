import type { Context, MiddlewareHandler } from 'hono'
import { UnauthenticatedError } from '../../core/errors.ts'
import { contextValue } from '../../core/http/context-value.ts'
import { type RateLimiters, throttle } from '../../core/http/index.ts'
import { countRequest, sendRateLimitHeaders } from '../../core/http/throttle.ts'

/** The two places a limiter runs around `apiKeyAuth`. */
export interface TwoStageThrottle {
  /** Before `apiKeyAuth`: counts each request the key check refuses against its client IP. */
  beforeAuth: MiddlewareHandler
  /** After `apiKeyAuth`: counts every authenticated request, with its `ApiKeyInfo`. */
  afterAuth: MiddlewareHandler
}

/**
 * One named limiter in two stages around `apiKeyAuth`, so a limiter that buckets by key
 * (`r.apiKey ? { key: \`key:${r.apiKey.id}\`, … } : perIp(r, 60)`) sees the key, while requests
 * without a valid key are still limited per client IP:
 *
 * ```ts
 * const limit = twoStageThrottle(limiters, 'api')
 * group.use(limit.beforeAuth).use(apiKeyAuth({ provider })).use(limit.afterAuth)
 * ```
 *
 * Each request is counted once: a refused key (401) by `beforeAuth`, in the limiter's bucket
 * for a request without a key (per IP for the built-in `api` limiter), answered 429 instead of
 * 401 once that bucket is spent; an accepted key by `afterAuth`. With a per-IP limiter (the
 * default) this is the same 60 requests per minute per IP as a single throttle before auth.
 */
export function twoStageThrottle(limiters: RateLimiters, name: string): TwoStageThrottle {
  return {
    beforeAuth: async function throttleRefusedKeys(c, next) {
      let refusal: unknown
      try {
        await next()
      } catch (error) {
        if (!(error instanceof UnauthenticatedError)) throw error
        refusal = error
      }
      // Inside a group with its own error handler the 401 is already a response here.
      await countRefusedKey(c, limiters, name, refusal ?? c.error)
      if (refusal !== undefined) throw refusal
    },
    afterAuth: throttle(limiters, name),
  }
}

/**
 * Counts a request whose key check failed with `error`, when that was a refusal (401) and no
 * key was accepted before: in the limiter's bucket for a request without a key (per client
 * IP for the built-in `api` limiter), so a flood of bad keys gets 429 once the bucket is spent.
 * A 403 (missing scope) or a failing key store is not counted.
 */
export async function countRefusedKey(
  c: Context,
  limiters: RateLimiters,
  name: string,
  error: unknown,
): Promise<void> {
  if (!(error instanceof UnauthenticatedError) || contextValue(c, 'apiKey') !== undefined) return
  const unsent = await countRequest(c, limiters, name)
  if (unsent !== undefined) sendRateLimitHeaders(c, unsent)
}
