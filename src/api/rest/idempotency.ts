import { createHash } from 'node:crypto'
import type { MiddlewareHandler } from 'hono'
import { ValidationError } from '../../core/errors.ts'
import { keyDigest } from '../../core/kv/key-digest.ts'
import type { KeyValueStore } from '../../core/kv/key-value-store.ts'
import type { ApiEnv } from '../auth/api-key-auth.ts'
import { ConflictError } from './db-errors.ts'

/** The request header a client names a POST's retries with (Stripe's, and the IETF draft's). */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key'

/** How long a first answer is kept for retries: 24 hours, as Stripe keeps it. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000

/** Longest key accepted (Stripe's limit). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255

/** Options of `idempotency`. */
export interface IdempotencyOptions {
  /**
   * Where first answers are kept: the app's shared store (`RedisKeyValueStore` when
   * `REDIS_URL` is set), so a retry that reaches another instance gets the same answer.
   */
  store: KeyValueStore
  /** How long an answer is replayed. Default 24 hours. */
  ttlMs?: number
  /**
   * How long a request still running holds its key (retries meanwhile answer 409). It bounds
   * the wait after an instance died mid-request. Default 5 minutes.
   */
  pendingTtlMs?: number
}

/** What the store keeps under a key: the request's fingerprint, and its answer once there. */
interface StoredAnswer {
  fingerprint: string
  status?: number
  body?: string
}

/**
 * `Idempotency-Key` on POST: the first request with a key (per API key) runs; a retry with the
 * same key and the same body answers the first answer again (status and body, with
 * `Idempotent-Replayed: true`) without running. The same key with another body is a 422; a
 * retry while the first still runs is a 409. Only successful (2xx) answers are kept: a
 * refused request changed nothing, so its retry runs again. The key is stored as a digest
 * (with the API key's id), never as given.
 *
 * Mount it after the API-key check (`apiGuard`), which tells whose key it is.
 * @example
 * ```ts
 * app.use('/api/v1/*', apiGuard({ apiKeys, limiters }), idempotency({ store: shared.kv }))
 * ```
 */
export function idempotency(options: IdempotencyOptions): MiddlewareHandler<ApiEnv> {
  const { store, ttlMs = IDEMPOTENCY_TTL_MS, pendingTtlMs = 5 * 60 * 1000 } = options
  if (!store || typeof store.setIfAbsent !== 'function') {
    throw new TypeError('idempotency: `store` must be a KeyValueStore (the app’s shared.kv)')
  }
  return async function idempotencyMiddleware(c, next) {
    const given = c.req.method === 'POST' ? c.req.header(IDEMPOTENCY_HEADER) : undefined
    if (given === undefined) return next()
    checkKey(given)
    const owner = c.get('apiKey')?.id ?? 'anonymous'
    const key = `kiln:idempotency:${keyDigest(`${owner}\n${given}`)}`
    const url = new URL(c.req.url)
    const body = new Uint8Array(await c.req.raw.clone().arrayBuffer())
    const fingerprint = createHash('sha256')
      .update(`${c.req.method} ${url.pathname}${url.search}\n`)
      .update(body)
      .digest('base64url')
    const claimed = await store.setIfAbsent(key, JSON.stringify({ fingerprint }), {
      ttlMs: pendingTtlMs,
    })
    if (!claimed) {
      const stored = await store.get(key)
      const answer = stored === undefined ? undefined : (JSON.parse(stored) as StoredAnswer)
      if (answer && answer.fingerprint !== fingerprint) {
        throw new ValidationError({
          [IDEMPOTENCY_HEADER]: ['was already used with another request'],
        })
      }
      if (answer?.status === undefined || answer.body === undefined) {
        throw new ConflictError('A request with this Idempotency-Key is still in progress')
      }
      return c.body(answer.body, answer.status as 200, {
        'content-type': 'application/json',
        'idempotent-replayed': 'true',
      })
    }
    try {
      await next()
    } catch (error) {
      await store.delete(key)
      throw error
    }
    const { status } = c.res
    if (status < 200 || status >= 300) {
      await store.delete(key)
      return
    }
    const text = await c.res.clone().text()
    const kept: StoredAnswer = { fingerprint, status, body: text }
    await store.set(key, JSON.stringify(kept), { ttlMs })
  }
}

/** 1 to 255 visible ASCII characters, so every store and log line takes it as it is. */
function checkKey(given: string): void {
  if (given.length === 0 || given.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new ValidationError({
      [IDEMPOTENCY_HEADER]: [`must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`],
    })
  }
  if (!/^[\x21-\x7e]+$/.test(given)) {
    throw new ValidationError({
      [IDEMPOTENCY_HEADER]: ['must hold only visible ASCII characters'],
    })
  }
}
