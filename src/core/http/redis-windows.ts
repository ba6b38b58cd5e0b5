import { corkUntilTheLoopTurns } from '../cork.ts'
import { keyDigest } from '../kv/key-digest.ts'
import type { Redis } from '../redis.ts'
import { MemoryWindows, type WindowCount } from './memory-windows.ts'

/**
 * Opens the bucket's window unless it is open, counts the request, and answers the count and
 * the milliseconds left: one atomic round trip per request.
 */
const COUNT_SCRIPT = `redis.call('set', KEYS[1], 0, 'EX', ARGV[2], 'NX')
local consumed = redis.call('incrby', KEYS[1], ARGV[1])
local ttl = redis.call('pttl', KEYS[1])
if ttl == -1 then
  redis.call('expire', KEYS[1], ARGV[2])
  ttl = 1000 * ARGV[2]
end
return {consumed, ttl}`

/** Takes one request back from an open window, never below zero, in one step. */
const REFUND_SCRIPT = `local consumed = tonumber(redis.call('get', KEYS[1]))
if consumed and consumed > 0 then return redis.call('decr', KEYS[1]) end
return 0`

/** The scripts as commands of the client (EVALSHA, the script sent again only when Redis lost it). */
const COMMAND = 'kilnRateWindow'
const REFUND = 'kilnRateRefund'

type CountingRedis = Redis & {
  [COMMAND](key: string, points: number, durationSeconds: number): Promise<[number, number]>
  [REFUND](key: string): Promise<number>
}

/**
 * Fixed windows counted in Redis, one count for every instance: `<keyPrefix>:<digest>` holds
 * the bucket's count and expires with its window. The bucket is named by its digest
 * (`keyDigest`): buckets hold client addresses and the emails of login attempts. When Redis is not connected or a command
 * fails, the same windows are counted in this process's memory (`onFallback` is told), so a
 * Redis outage neither refuses requests with a 500 nor lets them through unlimited.
 */
export class RedisWindows {
  readonly #redis: CountingRedis
  readonly #keyPrefix: string
  readonly #durationSeconds: number
  readonly #fallback: MemoryWindows
  readonly #onFallback: () => void

  constructor(
    redis: Redis,
    options: {
      keyPrefix: string
      durationSeconds: number
      onFallback: () => void
      /** The clock of the counts kept in memory while Redis fails. */
      now?: () => number
    },
  ) {
    const defined = redis as unknown as Partial<Record<string, unknown>>
    for (const [name, lua] of [
      [COMMAND, COUNT_SCRIPT],
      [REFUND, REFUND_SCRIPT],
    ] as const) {
      if (typeof defined[name] !== 'function') redis.defineCommand(name, { numberOfKeys: 1, lua })
    }
    this.#redis = redis as unknown as CountingRedis
    this.#keyPrefix = options.keyPrefix
    this.#durationSeconds = options.durationSeconds
    this.#fallback = new MemoryWindows(options.durationSeconds * 1000, options.now)
    this.#onFallback = options.onFallback
  }

  consume(key: string): Promise<WindowCount> | WindowCount {
    // Not connected (yet, or any more): count here at once rather than queue the command.
    if (this.#redis.status !== 'ready') return this.#fallBack().consume(key)
    // The counts of one loop turn leave in one write (docs/api-keys.md).
    corkUntilTheLoopTurns(this.#redis.stream)
    return this.#redis[COMMAND](this.#redisKey(key), 1, this.#durationSeconds).then(
      ([count, msLeft]) => ({ count, msLeft }),
      () => this.#fallBack().consume(key),
    )
  }

  async get(key: string): Promise<WindowCount | undefined> {
    if (this.#redis.status !== 'ready') return this.#fallBack().get(key)
    const redisKey = this.#redisKey(key)
    try {
      const replies = await this.#redis.multi().get(redisKey).pttl(redisKey).exec()
      const [[countError, count] = [], [ttlError, msLeft] = []] = replies ?? []
      if (!replies || countError || ttlError) throw countError ?? ttlError ?? new Error('aborted')
      if (count === null) return undefined
      return { count: Number(count), msLeft: Math.max(Number(msLeft), 0) }
    } catch {
      return this.#fallBack().get(key)
    }
  }

  async refund(key: string): Promise<void> {
    if (this.#redis.status !== 'ready') return this.#fallBack().refund(key)
    try {
      await this.#redis[REFUND](this.#redisKey(key))
    } catch {
      this.#fallBack().refund(key)
    }
  }

  async delete(key: string): Promise<void> {
    if (this.#redis.status !== 'ready') return this.#fallBack().delete(key)
    try {
      await this.#redis.del(this.#redisKey(key))
    } catch {
      this.#fallBack().delete(key)
    }
  }

  #redisKey(key: string): string {
    return `${this.#keyPrefix}:${keyDigest(key)}`
  }

  #fallBack(): MemoryWindows {
    this.#onFallback()
    return this.#fallback
  }
}
