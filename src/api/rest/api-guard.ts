import type { MiddlewareHandler } from 'hono'
import { checkBodyLimit, limitBody } from '../../core/http/body-limit.ts'
import { recordResponse } from '../../core/http/plain-response.ts'
import type { RateLimiters } from '../../core/http/rate-limiters.ts'
import { answerUnhandledError, errorHandler } from '../../core/http-errors.ts'
import { createLogger, type Logger } from '../../core/logger.ts'
import { type ApiEnv, authenticate, keyCheck } from '../auth/api-key-auth.ts'
import type { ApiKeyInfo, ApiKeyProvider } from '../provider/api-key-provider.ts'
import { reserveKeyCheck, settleKeyCheck } from '../rate-limit/two-stage.ts'
import { PRIVATE_CACHE } from './http-cache.ts'

/** Options of `apiGuard`. */
export interface ApiGuardOptions {
  /** Verifies `Authorization: Bearer <key>` (as `apiKeyAuth`'s `provider`). */
  apiKeys: ApiKeyProvider
  /** From `createRateLimiters()`. */
  limiters: RateLimiters
  /** The limiter every request counts against. Default `api`. */
  limiter?: string
  /** Scopes every request must carry (as `apiKeyAuth`'s `scopes`); none means any valid key. */
  scopes?: string[]
  /** Largest request body in bytes; larger ones answer 413. Default 1 MiB. */
  maxBodyBytes?: number
  /** Where refused keys are logged with their reason. */
  logger?: Logger
}

/**
 * The guard of an API group, in one middleware: what `privateCache()`, the two stages of
 * `twoStageThrottle(limiters, limiter)` around `apiKeyAuth`, and `bodyLimit()` do in that order,
 * for the dispatch of one middleware instead of five (each costs about as much again as the
 * work it does on a cached request; docs/performance-archive.md, "The show path").
 *
 * - Answers are built by `c.json()` with `Cache-Control: private, no-cache`,
 *   `Vary: Authorization`, and on 200s to GET a weak `ETag` (304 on `If-None-Match`).
 * - The key is checked (401 with `WWW-Authenticate: Bearer` whatever the reason; 403 for a
 *   missing scope; 500 when the key store fails).
 * - Each request is counted once against the limiter, before its key is checked (in the
 *   bucket of a request without a key: per client IP for the built-in `api` limiter), so a
 *   burst of bad keys gets 429 instead of 401 once its bucket is spent, however many arrive at
 *   once; an accepted key's request counts in its own bucket. A 403 or a key store failure is
 *   not counted. Answers carry `RateLimit-Limit`, `-Remaining` and `-Reset`, and a
 *   429 `Retry-After`.
 * - Bodies are read up to `maxBodyBytes` (413 past it) before the handler sees them.
 *
 * Errors are thrown for the app's error handler to answer (`app.onError(errorHandler(…))`), as the
 * separate middlewares do; one the app's handler did not answer, the guard answers with kiln's
 * after the group's handlers, so the group needs no `onError` of its own (which would cost every
 * request a wrapper per handler).
 * @example
 * ```ts
 * app.use('/api/v1/*', apiGuard({ apiKeys, limiters, logger }))
 * ```
 */
export function apiGuard(options: ApiGuardOptions): MiddlewareHandler<ApiEnv> {
  const { apiKeys, limiters, limiter = 'api', scopes, logger } = options
  const check = keyCheck({ provider: apiKeys, scopes, logger }, 'apiGuard')
  const maxBytes = checkBodyLimit(options.maxBodyBytes, 'apiGuard')
  const answerError = errorHandler({ logger: logger ?? createLogger() })
  if (!limiters || typeof limiters.consume !== 'function') {
    throw new TypeError('apiGuard: `limiters` must be the result of createRateLimiters()')
  }
  if (!limiters.has(limiter)) {
    throw new TypeError(`apiGuard: no rate limiter named ${JSON.stringify(limiter)}`)
  }

  return async function apiGuardMiddleware(c, next) {
    const answer = recordResponse(c, PRIVATE_CACHE)
    try {
      // Counted before the key is checked: a burst of bad keys meets 429, not the key store.
      const reservation = await reserveKeyCheck(c, limiters, limiter)
      let key: ApiKeyInfo
      try {
        key = await authenticate(c, check)
      } catch (error) {
        await settleKeyCheck(c, limiters, limiter, reservation, error)
        throw error
      }
      c.set('apiKey', key)
      // Inside the recorded answer the limiter's headers are always recorded: nothing to send after.
      await settleKeyCheck(c, limiters, limiter, reservation)
      await limitBody(c, maxBytes)
    } catch (error) {
      answer.close()
      // The group's refusals are answered here, whatever error handler the app has.
      return answerError(error as Error, c)
    }
    // An error of the handlers is answered while the answer is still being recorded, by the
    // app's error handler, or by kiln's when the app's is not.
    try {
      await next()
      answerUnhandledError(c, answerError)
    } finally {
      answer.close()
    }
    answer.complete()
  }
}
