import type { Redis } from '../redis.ts'
import type { KeyValueStore, SetOptions } from './key-value-store.ts'

// The TTL is set only by the call that creates the counter: a fixed window.
const INCREMENT = `
local created = redis.call('EXISTS', KEYS[1]) == 0
local v = redis.call('INCRBY', KEYS[1], ARGV[1])
if created and tonumber(ARGV[2]) > 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return v`

const DELETE_IF = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`

// ARGV[3] is the TTL in ms, 0 for none.
const REPLACE_IF = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if tonumber(ARGV[3]) > 0 then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
else
  redis.call('SET', KEYS[1], ARGV[2])
end
return 1`

/** Options of `new RedisKeyValueStore()`. */
export interface RedisStoreOptions {
  /** Prepended to every key, so several apps (or test runs) can share one Redis. */
  prefix?: string
}

/**
 * A KeyValueStore on Redis: one state for every instance. Atomic by Redis's own commands.
 * @example
 * ```ts
 * const connections = new RedisConnections('redis://127.0.0.1:6379')
 * const kv = new RedisKeyValueStore(connections.connect(), { prefix: 'tickets:' })
 * ```
 */
export class RedisKeyValueStore implements KeyValueStore {
  readonly #redis: Redis
  readonly #prefix: string

  constructor(redis: Redis, options: RedisStoreOptions = {}) {
    this.#redis = redis
    this.#prefix = options.prefix ?? 'kiln:'
  }

  async get(key: string): Promise<string | undefined> {
    return (await this.#redis.get(this.#prefix + key)) ?? undefined
  }

  async set(key: string, value: string, options?: SetOptions): Promise<void> {
    if (options?.ttlMs !== undefined) {
      await this.#redis.set(this.#prefix + key, value, 'PX', ttl(options.ttlMs))
    } else {
      await this.#redis.set(this.#prefix + key, value)
    }
  }

  async setIfAbsent(key: string, value: string, options?: SetOptions): Promise<boolean> {
    const result =
      options?.ttlMs !== undefined
        ? await this.#redis.set(this.#prefix + key, value, 'PX', ttl(options.ttlMs), 'NX')
        : await this.#redis.set(this.#prefix + key, value, 'NX')
    return result === 'OK'
  }

  async take(key: string): Promise<string | undefined> {
    return (await this.#redis.getdel(this.#prefix + key)) ?? undefined
  }

  async delete(key: string): Promise<void> {
    await this.#redis.del(this.#prefix + key)
  }

  async deleteIf(key: string, value: string): Promise<boolean> {
    return (await this.#redis.eval(DELETE_IF, 1, this.#prefix + key, value)) === 1
  }

  async replaceIf(
    key: string,
    current: string,
    next: string,
    options?: SetOptions,
  ): Promise<boolean> {
    const ttlMs = options?.ttlMs === undefined ? 0 : ttl(options.ttlMs)
    return (await this.#redis.eval(REPLACE_IF, 1, this.#prefix + key, current, next, ttlMs)) === 1
  }

  async increment(key: string, by = 1, options?: SetOptions): Promise<number> {
    const result = await this.#redis.eval(
      INCREMENT,
      1,
      this.#prefix + key,
      by,
      options?.ttlMs === undefined ? 0 : ttl(options.ttlMs),
    )
    return Number(result)
  }

  /** The connection belongs to the RedisConnections that made it; closing it is theirs. */
  async close(): Promise<void> {}
}

function ttl(ms: number): number {
  return Math.max(1, Math.ceil(ms))
}
