import type { Redis, RedisOptions } from 'ioredis'
import { DEFAULT_REDIS_COMMAND_TIMEOUT_MS } from './budgets.ts'
import { firstLineOf } from './first-line.ts'
import { requireOptional } from './optional-package.ts'

/** An ioredis client, as `RedisConnections` and `SharedState` hand them out. */
export type { Redis }

/** Options of `RedisConnections`' connections. */
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

/** The last connection error of each connection since it was last ready. */
const lastErrors = new WeakMap<Redis, Error>()

/**
 * The one place kiln opens Redis connections. Every connection it hands out is tracked and
 * closed by `close()`, so a shutting-down process leaves nothing open.
 * @example
 * ```ts
 * const connections = new RedisConnections('redis://127.0.0.1:6379')
 * const redis = connections.connect({ name: 'reports' })
 * ```
 */
export class RedisConnections {
  readonly url: string
  readonly #open = new Set<Redis>()
  readonly #defaults: RedisOptions
  readonly #commandTimeoutMs: number

  /** `commandTimeoutMs`: how long a non-blocking command waits for its answer (default 5 s). */
  constructor(
    url: string,
    defaults: RedisOptions = {},
    commandTimeoutMs = DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
  ) {
    this.url = url
    this.#defaults = defaults
    this.#commandTimeoutMs = commandTimeoutMs
  }

  /** `host:port` of the URL, for messages (never the password). */
  get address(): string {
    return redisAddress(this.url)
  }

  connect(options: ConnectOptions = {}): Redis {
    const blocking = Boolean(options.blocking)
    // Required on first use: an app without REDIS_URL needs no ioredis installed.
    const { Redis } = requireOptional<typeof import('ioredis')>('ioredis', 'Redis (REDIS_URL)')
    const redis = new Redis(this.url, {
      lazyConnect: false,
      connectionName: options.name,
      maxRetriesPerRequest: blocking ? null : 2,
      // Commands issued before the first connection wait for it (bounded by the retries above).
      // After that, request-path commands run now or fail now: queued or re-sent after an
      // outage, a command its caller already gave up on (a webhook's dedup mark, say) would
      // still land behind the caller's back. Blocking connections wait for Redis by design.
      enableOfflineQueue: true,
      autoResendUnfulfilledCommands: blocking,
      // Retries only count failed connection attempts: a peer that accepts and then drops every
      // connection (a proxy in front of a dead Redis) would otherwise hold commands for ever.
      commandTimeout: blocking ? undefined : this.#commandTimeoutMs,
      connectTimeout: 5_000,
      retryStrategy: (times) => Math.min(times * 200, 2_000),
      ...this.#defaults,
    })
    // Errors surface on the commands that fail; the listener keeps ioredis from printing
    // unhandled-error warnings while it reconnects, and remembers why for pingRedis.
    redis.on('error', (error: Error) => lastErrors.set(redis, error))
    redis.on('ready', () => {
      lastErrors.delete(redis)
      if (!blocking && this.#defaults.enableOfflineQueue === undefined) {
        redis.options.enableOfflineQueue = false
      }
    })
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
  let timer: NodeJS.Timeout | undefined
  try {
    await Promise.race([
      redis.ping(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)
      }),
    ])
  } catch (error) {
    // The connection's own error (refused, unknown host, wrong password) says more than the
    // command's ("max retries", "stream isn't writeable").
    const known = lastErrors.get(redis)?.message ?? (error as Error).message
    const reason = withoutPassword(firstLineOf(known), url)
    throw new Error(`Redis at ${redisAddress(url)} is unreachable (${reason})`, { cause: error })
  } finally {
    clearTimeout(timer)
  }
}

function withoutPassword(text: string, url: string): string {
  let password = ''
  try {
    password = decodeURIComponent(new URL(url).password)
  } catch {}
  return password ? text.split(password).join('<redacted>') : text
}
