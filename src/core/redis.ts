import { Redis, type RedisOptions } from 'ioredis'

export type { Redis }

/**
 * The one place kiln opens Redis connections. Every connection it hands out is tracked and
 * closed by `close()`, so a shutting-down process leaves nothing open.
 */
export class RedisConnections {
  readonly url: string
  readonly #open = new Set<Redis>()
  readonly #defaults: RedisOptions

  constructor(url: string, defaults: RedisOptions = {}) {
    this.url = url
    this.#defaults = defaults
  }

  /**
   * A new connection. `blocking` ones (BullMQ workers) never give up retrying a command;
   * request-path ones fail fast so a Redis outage becomes a clear 5xx instead of a hang.
   */
  connect(options: { blocking?: boolean; name?: string } = {}): Redis {
    const redis = new Redis(this.url, {
      lazyConnect: false,
      connectionName: options.name,
      maxRetriesPerRequest: options.blocking ? null : 2,
      enableOfflineQueue: true,
      connectTimeout: 5_000,
      retryStrategy: (times) => Math.min(times * 200, 2_000),
      ...this.#defaults,
    })
    // Errors surface on the commands that fail; the event only needs a listener so that
    // ioredis does not print unhandled-error warnings while it reconnects.
    redis.on('error', () => {})
    this.#open.add(redis)
    redis.once('end', () => this.#open.delete(redis))
    return redis
  }

  async close(): Promise<void> {
    await Promise.all(
      [...this.#open].map(async (redis) => {
        try {
          await redis.quit()
        } catch {
          redis.disconnect()
        }
      }),
    )
    this.#open.clear()
  }
}

/** Checks that Redis answers, with a clear message naming the URL's host (never its password). */
export async function pingRedis(redis: Redis, url: string): Promise<void> {
  try {
    await redis.ping()
  } catch (cause) {
    const { host, port } = new URL(url)
    throw new Error(`Redis at ${host}:${port || 6379} is unreachable`, { cause })
  }
}
