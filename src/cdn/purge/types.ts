import type { Clock } from '../../core/clock.ts'
import type { Logger } from '../../core/logger.ts'
import type { Redis } from '../../core/redis.ts'

/** Purges CDN cache entries by relative path (`index.html`, `assets/*`, `*`). */
export interface PurgeApi {
  readonly provider: string
  /** Resolves when every path is purged; rejects with `PurgeFailedError` naming the failed batches. */
  purge(paths: string[]): Promise<void>
}

/** What every HTTP adapter shares: injected time, retries and the HTTP client. */
export interface PurgeHttpOptions {
  logger?: Logger
  clock?: Clock
  /** Waits `ms` (tests pass one that advances a ManualClock). */
  sleep?: (ms: number) => Promise<void>
  fetch?: typeof fetch
  /** Retries of a request answered 429 (default 3). */
  maxRetries?: number
  /** The longest `Retry-After` honoured; a longer one fails the batch (default 60 s). */
  maxRetryAfterMs?: number
  /** Per-request timeout (default 15 s). */
  timeoutMs?: number
  /**
   * A Redis client (from kiln's `RedisConnections`, e.g. `shared.client`). With it, a
   * provider's request window (DigitalOcean: 5 requests per 10 s) is shared by every instance;
   * without it, each instance keeps its own window in memory.
   */
  redis?: Redis | undefined
  /** Prefix of the shared window's Redis key (default `kiln:`). */
  redisPrefix?: string
}
