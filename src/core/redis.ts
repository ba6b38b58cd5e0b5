import { Redis, type RedisOptions } from 'ioredis'

export type { Redis }

export interface ConnectOptions {
  /**
   * Blocking connections (BullMQ workers) retry every command until Redis is back.
   * Others give up after a few reconnection attempts, so a Redis outage becomes a clear
   * error instead of a hang.
   */
  blocking?: boolean
  /** `CLIENT SETNAME`, visible in `CLIENT LIST`. */
  name?: string
}

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

  /** `host:port` of the URL, for messages (never the password). */
  get address(): string {
    return redisAddress(this.url)
  }

  connect(options: ConnectOptions = {}): Redis {
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

  /** Closes every connection: politely (QUIT) when connected, at once otherwise. */
  async close(): Promise<void> {
    await Promise.all(
      [...this.#open].map(async (redis) => {
        if (redis.status !== 'ready') {
          redis.disconnect()
          return
        }
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

/** `host:port` of a Redis URL, without credentials. */
export function redisAddress(url: string): string {
  try {
    const { hostname, port } = new URL(url)
    return `${hostname}:${port || 6379}`
  } catch {
    return '(invalid Redis URL)'
  }
}

/**
 * Checks that Redis answers. Rejects within `timeoutMs` with a one-line message naming the
 * URL's host and port (never its password): a start-up check that cannot hang.
 */
export async function pingRedis(redis: Redis, url: string, timeoutMs = 5_000): Promise<void> {
  let lastError: Error | undefined
  const remember = (error: Error) => {
    lastError = error
  }
  redis.on('error', remember)
  let timer: NodeJS.Timeout | undefined
  try {
    await Promise.race([
      redis.ping(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)
      }),
    ])
  } catch (error) {
    const reason = withoutPassword(oneLine(lastError?.message ?? (error as Error).message), url)
    throw new Error(`Redis at ${redisAddress(url)} is unreachable (${reason})`, {
      cause: error,
    })
  } finally {
    clearTimeout(timer)
    redis.off('error', remember)
  }
}

function oneLine(text: string): string {
  return text.split('\n')[0] ?? text
}

function withoutPassword(text: string, url: string): string {
  let password = ''
  try {
    password = decodeURIComponent(new URL(url).password)
  } catch {}
  return password ? text.split(password).join('<redacted>') : text
}
