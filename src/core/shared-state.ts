import type { KeyValueStore } from './kv/key-value-store.ts'
import { MemoryKeyValueStore } from './kv/memory-store.ts'
import { RedisKeyValueStore } from './kv/redis-store.ts'
import type { Logger } from './logger.ts'
import { MemoryPubSub, type PubSub, RedisPubSub } from './pubsub.ts'
import { BullMqQueue, type BullMqQueueOptions } from './queue/bullmq-queue.ts'
import { MemoryQueue } from './queue/memory-queue.ts'
import type { Queue, RetryPolicy } from './queue/queue.ts'
import { pingRedis, type Redis, RedisConnections } from './redis.ts'
import { revealSecret, type Secret } from './secret.ts'

/** Options of `createSharedState`. */
export interface SharedStateOptions {
  /** Redis for everything shared between instances; memory in this process without it. */
  redisUrl?: Secret | string | undefined
  logger?: Logger
  /** Key and queue prefix, so several apps or test runs can share one Redis. */
  prefix?: string
  retry?: Partial<RetryPolicy>
  queueName?: string
  /** BullMQ tuning (lock duration, stalled-job check, coalescing) when on Redis. */
  bullmq?: Omit<BullMqQueueOptions, 'connections' | 'name' | 'prefix' | 'retry' | 'logger'>
  /** How long the start-up ping may take before it fails (default 5 s). */
  connectTimeoutMs?: number
  /**
   * How long a Redis command waits for its answer before it fails, on every connection but the
   * queue workers' blocking ones (default 5 s; the app config's `REDIS_COMMAND_TIMEOUT_MS`).
   */
  commandTimeoutMs?: number
}

/**
 * The state many instances must share: a KeyValueStore and a Queue, both on Redis when a URL
 * is given, both in memory otherwise. One place decides, so no module opens its own connection.
 */
export interface SharedState {
  kind: 'memory' | 'redis'
  kv: KeyValueStore
  queue: Queue
  /** Messages between instances (Redis PUBLISH/SUBSCRIBE, or this process's memory). */
  pubsub: PubSub
  /** The Redis connection factory when on Redis (rate limiters take a client from it). */
  redis: RedisConnections | undefined
  /** A request-path client (fails fast) when on Redis. */
  client: Redis | undefined
  close(): Promise<void>
}

/**
 * Opens the shared state. With a Redis URL it pings Redis first and rejects, within
 * `connectTimeoutMs`, with one line naming host:port (never the password) when it does not answer.
 * @example
 * ```ts
 * const shared = await createSharedState({ redisUrl: config.redisUrl, logger })
 * ```
 */
export async function createSharedState(options: SharedStateOptions = {}): Promise<SharedState> {
  const prefix = options.prefix ?? 'kiln'
  const redisUrl = options.redisUrl === undefined ? '' : revealSecret(options.redisUrl)
  if (!redisUrl) {
    const kv = new MemoryKeyValueStore()
    const queue = new MemoryQueue({ retry: options.retry, logger: options.logger })
    const pubsub = new MemoryPubSub()
    return {
      kind: 'memory',
      kv,
      queue,
      pubsub,
      redis: undefined,
      client: undefined,
      async close() {
        await pubsub.close()
        await queue.close()
        await kv.close()
      },
    }
  }
  const redis = new RedisConnections(redisUrl, {}, options.commandTimeoutMs)
  const client = redis.connect({ name: 'kiln' })
  try {
    await pingRedis(client, redisUrl, options.connectTimeoutMs)
  } catch (error) {
    await redis.close()
    throw error
  }
  const kv = new RedisKeyValueStore(client, { prefix: `${prefix}:` })
  const queue = new BullMqQueue({
    connections: redis,
    name: options.queueName ?? 'jobs',
    prefix,
    retry: options.retry,
    logger: options.logger,
    ...options.bullmq,
  })
  const pubsub = new RedisPubSub(redis, client, { prefix: `${prefix}:` })
  return {
    kind: 'redis',
    kv,
    queue,
    pubsub,
    redis,
    client,
    async close() {
      await pubsub.close()
      await queue.close()
      await redis.close()
    },
  }
}
