import { TooManyRequestsError } from '../../core/errors.ts'
import type { Redis } from '../../core/redis.ts'

/** How many streams one key and one client address may hold open at once. */
export interface StreamQuota {
  perKey: number
  perIp: number
}

/** A stream's hold on the quota: renewed while it is open, let go when it ends. */
export interface StreamLease {
  renew(): Promise<void>
  release(): Promise<void>
}

/** The counts of open streams, per key and per address: memory, or Redis across instances. */
export interface StreamCounter {
  /** Holds a place for the stream, or rejects with `TooManyRequestsError` (429). */
  acquire(id: string, key: string | undefined, ip: string): Promise<StreamLease>
}

/** The Retry-After of a refused stream: a place frees when another stream ends. */
const RETRY_AFTER_S = 5

export class MemoryStreamCounter implements StreamCounter {
  readonly #open = new Map<string, number>()
  readonly #quota: StreamQuota

  constructor(quota: StreamQuota) {
    this.#quota = quota
  }

  async acquire(_id: string, key: string | undefined, ip: string): Promise<StreamLease> {
    const names = namesOf(key, ip)
    const full = names.some(([name, kind]) => (this.#open.get(name) ?? 0) >= this.#quota[kind])
    if (full) throw new TooManyRequestsError(RETRY_AFTER_S, 'Too many open streams')
    for (const [name] of names) this.#open.set(name, (this.#open.get(name) ?? 0) + 1)
    let released = false
    return {
      renew: async () => {},
      release: async () => {
        if (released) return
        released = true
        for (const [name] of names) {
          const left = (this.#open.get(name) ?? 1) - 1
          if (left > 0) this.#open.set(name, left)
          else this.#open.delete(name)
        }
      },
    }
  }
}

/**
 * One sorted set per key and per address, each member a stream scored by when its lease runs
 * out: an instance that dies leaves leases that lapse on their own. KEYS: the sets. ARGV: now,
 * lease end, stream id, then each set's limit. Answers 0 when one is full.
 */
const ACQUIRE = `
for i = 1, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', ARGV[1])
  if redis.call('ZCARD', KEYS[i]) >= tonumber(ARGV[3 + i]) then return 0 end
end
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], ARGV[2], ARGV[3])
  redis.call('PEXPIREAT', KEYS[i], ARGV[2])
end
return 1`

/** Stream counts in Redis, so the limits hold across every instance. */
export class RedisStreamCounter implements StreamCounter {
  constructor(
    readonly redis: Redis,
    readonly quota: StreamQuota,
    readonly prefix: string,
    /** How long a lease lasts unrenewed: a few heartbeats. */
    readonly leaseMs: number,
  ) {}

  async acquire(id: string, key: string | undefined, ip: string): Promise<StreamLease> {
    const names = namesOf(key, ip)
    const keys = names.map(([name]) => `${this.prefix}streams:${name}`)
    const limits = names.map(([, kind]) => this.quota[kind])
    const until = () => Date.now() + this.leaseMs
    const ok = await this.redis.eval(
      ACQUIRE,
      keys.length,
      ...keys,
      Date.now(),
      until(),
      id,
      ...limits,
    )
    if (ok !== 1) throw new TooManyRequestsError(RETRY_AFTER_S, 'Too many open streams')
    return {
      renew: async () => {
        // The set lives as long as its newest lease: a renewal keeps it too.
        const end = until()
        for (const set of keys) {
          await this.redis.multi().zadd(set, 'XX', end, id).pexpireat(set, end).exec()
        }
      },
      release: async () => {
        for (const set of keys) await this.redis.zrem(set, id)
      },
    }
  }
}

function namesOf(key: string | undefined, ip: string): [string, keyof StreamQuota][] {
  return [
    ...(key === undefined ? [] : [[`key:${key}`, 'perKey'] as [string, 'perKey']]),
    [`ip:${ip}`, 'perIp'],
  ]
}
