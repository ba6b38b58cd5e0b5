import { describe } from 'vitest'
import {
  BullMqQueue,
  type BullMqQueueOptions,
  type KeyValueStore,
  ManualClock,
  MemoryKeyValueStore,
  MemoryQueue,
  type Queue,
  RedisKeyValueStore,
  type RetryPolicy,
} from '../../src/core/index.ts'
import { DatabaseKeyValueStore, migrate } from '../../src/db/index.ts'
import { type DatabaseBackendName, databaseBackends } from '../support/databases.ts'
import { redisUrl } from '../support/env.ts'
import { createTestRedis } from '../support/redis.ts'

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export interface TestStore {
  store: KeyValueStore
  /** Lets `ms` pass for the store: the manual clock moves, or real time goes by on Redis. */
  pass(ms: number): Promise<void>
  /** A TTL short enough to wait out on Redis (tests wait three times as long). */
  shortTtlMs: number
  /**
   * Time only moves when `pass` is called (a manual clock). On Redis real time also passes
   * between two commands, so a check made "just before expiry" could see it expired already.
   */
  exact: boolean
  cleanup(): Promise<void>
}

export interface StoreBackend {
  name: 'memory' | 'redis' | `database: ${DatabaseBackendName}`
  available: boolean
  create(): Promise<TestStore>
}

export const storeBackends: StoreBackend[] = [
  {
    name: 'memory',
    available: true,
    async create() {
      const clock = new ManualClock()
      const store = new MemoryKeyValueStore({ clock })
      return {
        store,
        shortTtlMs: 1_000,
        exact: true,
        async pass(ms) {
          clock.advance(ms)
        },
        cleanup: () => store.close(),
      }
    },
  },
  {
    name: 'redis',
    available: redisUrl !== undefined,
    async create() {
      const redis = await createTestRedis()
      const store = new RedisKeyValueStore(redis.connections.connect(), {
        prefix: `${redis.prefix}:`,
      })
      return {
        store,
        // Long enough that a loaded machine does not expire it between two commands.
        shortTtlMs: 250,
        exact: false,
        pass: (ms) => sleep(ms),
        async cleanup() {
          await store.close()
          await redis.cleanup()
        },
      }
    },
  },
]

/** The database's `kiln_state`: where state that must outlive a restart lives without Redis. */
export const databaseStoreBackends: StoreBackend[] = [
  ...databaseBackends.map(
    (backend): StoreBackend => ({
      name: `database: ${backend.name}`,
      available: backend.available,
      async create() {
        const { database, cleanup } = await backend.create()
        await migrate(database, { logger: { info: () => {}, warn: () => {} } })
        const clock = new ManualClock()
        const store = new DatabaseKeyValueStore(database, { clock })
        return {
          store,
          shortTtlMs: 1_000,
          exact: true,
          async pass(ms) {
            clock.advance(ms)
          },
          cleanup,
        }
      },
    }),
  ),
]

export interface TestQueue {
  queue: Queue
  cleanup(): Promise<void>
}

export interface QueueBackendOptions {
  retry?: Partial<RetryPolicy>
  bullmq?: Partial<BullMqQueueOptions>
}

export interface QueueBackend {
  name: 'memory' | 'bullmq'
  available: boolean
  create(options?: QueueBackendOptions): Promise<TestQueue>
}

export const queueBackends: QueueBackend[] = [
  {
    name: 'memory',
    available: true,
    async create(options = {}) {
      const queue = new MemoryQueue({ retry: options.retry })
      return { queue, cleanup: () => queue.close() }
    },
  },
  {
    name: 'bullmq',
    available: redisUrl !== undefined,
    async create(options = {}) {
      const redis = await createTestRedis()
      const queue = new BullMqQueue({
        connections: redis.connections,
        name: 'jobs',
        prefix: redis.prefix,
        retry: options.retry,
        ...options.bullmq,
      })
      return {
        queue,
        async cleanup() {
          await queue.close()
          await redis.cleanup()
        },
      }
    },
  },
]

/** Runs a suite once per backend; a backend whose service is not configured is skipped. */
export function describeEach<Backend extends { name: string; available: boolean }>(
  title: string,
  backends: Backend[],
  suite: (backend: Backend) => void,
): void {
  for (const backend of backends) {
    describe.skipIf(!backend.available)(`${title} [${backend.name}]`, () => suite(backend))
  }
}
