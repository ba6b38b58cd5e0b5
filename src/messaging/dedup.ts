import { type Clock, systemClock } from '../core/clock.ts'
import type { KeyValueStore } from '../core/kv/key-value-store.ts'
import type { DeduplicationIds, Queue } from '../core/queue/queue.ts'

/** How long a message id counts as seen: the spec's 5 minutes. */
export const DEDUP_TTL_MS = 5 * 60 * 1000

/**
 * Remembers webhook message ids so that a redelivered notification is acknowledged without
 * being queued again. `checkAndInsert` is atomic: of two concurrent deliveries of one id,
 * exactly one sees `false`.
 */
export interface DeduplicationStore {
  /** Marks `id` as seen; true when it already was (a duplicate). */
  checkAndInsert(id: string): Promise<boolean>
  /**
   * Forgets `id`. The webhook calls it when queuing failed after the mark was set, so the
   * provider's retry of that delivery is processed instead of dropped as a duplicate.
   */
  release(id: string): Promise<void>
}

/** Options of `new MemoryDeduplicationStore()`. */
export interface MemoryDeduplicationStoreOptions {
  clock?: Clock
  ttlMs?: number
}

/**
 * Ids seen by this process in the last 5 minutes. One instance only: use the KeyValueStore
 * one for many. Every id lives equally long and the map keeps insertion order, so the oldest
 * ids are at the front: each insert drops the expired ones from there, in amortized constant
 * time, however many ids a busy number has in its window.
 * @example
 * ```ts
 * const dedup = new MemoryDeduplicationStore({ ttlMs: 10 * 60_000 })
 * ```
 */
export class MemoryDeduplicationStore implements DeduplicationStore {
  readonly #seen = new Map<string, number>()
  readonly #clock: Clock
  readonly #ttlMs: number

  constructor(options: MemoryDeduplicationStoreOptions = {}) {
    this.#clock = options.clock ?? systemClock
    this.#ttlMs = options.ttlMs ?? DEDUP_TTL_MS
  }

  async checkAndInsert(id: string): Promise<boolean> {
    const now = this.#clock.now()
    this.#expire(now)
    const expiresAt = this.#seen.get(id)
    if (expiresAt !== undefined && expiresAt > now) return true
    // Delete first, so the re-inserted id moves to the back and the order stays by expiry.
    this.#seen.delete(id)
    this.#seen.set(id, now + this.#ttlMs)
    return false
  }

  async release(id: string): Promise<void> {
    this.#seen.delete(id)
  }

  /** Ids held. */
  get size(): number {
    return this.#seen.size
  }

  #expire(now: number): void {
    for (const [id, expiresAt] of this.#seen) {
      if (expiresAt > now) return
      this.#seen.delete(id)
    }
  }
}

/** Options of `new KeyValueDeduplicationStore()`. */
export interface KeyValueDeduplicationStoreOptions {
  ttlMs?: number
  /** Key prefix inside the store. */
  prefix?: string
}

/**
 * Dedup on a KeyValueStore's atomic `setIfAbsent`: on Redis it is shared by every instance
 * and survives restarts; on the memory store it behaves like MemoryDeduplicationStore.
 * @example
 * ```ts
 * const dedup = new KeyValueDeduplicationStore(shared.kv, { prefix: 'msg-dedup:' })
 * ```
 */
export class KeyValueDeduplicationStore implements DeduplicationStore {
  readonly #kv: KeyValueStore
  readonly #ttlMs: number
  readonly #prefix: string

  constructor(kv: KeyValueStore, options: KeyValueDeduplicationStoreOptions = {}) {
    this.#kv = kv
    this.#ttlMs = options.ttlMs ?? DEDUP_TTL_MS
    this.#prefix = options.prefix ?? 'msg-dedup:'
  }

  async checkAndInsert(id: string): Promise<boolean> {
    const stored = await this.#kv.setIfAbsent(this.#prefix + id, '1', { ttlMs: this.#ttlMs })
    return !stored
  }

  async release(id: string): Promise<void> {
    await this.#kv.delete(this.#prefix + id)
  }
}

/** Options of `new QueueDeduplicationStore()`. */
export interface QueueDeduplicationStoreOptions {
  ttlMs?: number
}

/**
 * Dedup kept by the queue itself, in its own deduplication ids (BullMQ's keys on Redis): a
 * webhook given this store and the same queue marks a notification's message id and queues
 * its job in one atomic step, one Redis round trip instead of two, and a failed enqueue leaves
 * no mark behind. Batches with several message ids mark them here first, then queue.
 * @example
 * ```ts
 * const dedup = new QueueDeduplicationStore(queue)
 * ```
 */
export class QueueDeduplicationStore implements DeduplicationStore {
  readonly queue: Queue
  readonly ttlMs: number
  readonly #ids: DeduplicationIds

  constructor(queue: Queue, options: QueueDeduplicationStoreOptions = {}) {
    if (!queue?.deduplicationIds) {
      throw new TypeError('QueueDeduplicationStore: this queue keeps no deduplication ids')
    }
    this.queue = queue
    this.ttlMs = options.ttlMs ?? DEDUP_TTL_MS
    this.#ids = queue.deduplicationIds
  }

  async checkAndInsert(id: string): Promise<boolean> {
    return (await this.#ids.claim([id], this.ttlMs)).length === 0
  }

  async release(id: string): Promise<void> {
    await this.#ids.release([id])
  }
}
