import type { WindowLimit } from '../../core/http/rate-limiters.ts'
import type { Redis } from '../../core/redis.ts'
import { windowMsOf } from './window.ts'

// One sorted set per window: a member per request, scored by Redis's own clock (so the
// instances' clocks need not agree). Returns 0 when a slot was taken, else the ms to wait.
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, tonumber(oldest[2]) + window - now)`

/**
 * The sliding window of `SlidingWindow`, kept in Redis: every instance that names the same key
 * shares it, so N instances together send at most `window.points` requests per window.
 */
export class RedisSlidingWindow {
  readonly #redis: Redis
  readonly #key: string
  readonly #limit: number
  readonly #windowMs: number
  readonly #sleep: (ms: number) => Promise<void>
  #sequence = 0

  constructor(options: {
    redis: Redis
    key: string
    window: WindowLimit
    sleep: (ms: number) => Promise<void>
  }) {
    this.#redis = options.redis
    this.#key = options.key
    this.#limit = options.window.points
    this.#windowMs = windowMsOf(options.window)
    this.#sleep = options.sleep
  }

  /** Resolves once a request may be sent, waiting (through `sleep`) while the window is full. */
  async acquire(): Promise<void> {
    const member = `${process.pid}:${Date.now()}:${++this.#sequence}:${Math.random()}`
    for (;;) {
      const wait = Number(
        await this.#redis.eval(TAKE, 1, this.#key, this.#limit, this.#windowMs, member),
      )
      if (wait === 0) return
      await this.#sleep(wait)
    }
  }
}
