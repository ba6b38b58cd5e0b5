import { type Clock, systemClock } from '../clock.ts'
import type { KeyValueStore, SetOptions } from './key-value-store.ts'

interface Entry {
  value: string
  expiresAt: number | undefined
}

/** Options of `new MemoryKeyValueStore()`. */
export interface MemoryStoreOptions {
  clock?: Clock
  /** Expired entries are swept every this many writes, so the map cannot grow without bound. */
  sweepEvery?: number
}

/**
 * A KeyValueStore in this process's memory. Operations are synchronous inside, hence atomic.
 * @example
 * ```ts
 * const kv = new MemoryKeyValueStore()
 * await kv.set('greeting', 'hello', { ttlMs: 60_000 })
 * ```
 */
export class MemoryKeyValueStore implements KeyValueStore {
  readonly #entries = new Map<string, Entry>()
  readonly #clock: Clock
  readonly #sweepEvery: number
  #writes = 0

  constructor(options: MemoryStoreOptions = {}) {
    this.#clock = options.clock ?? systemClock
    this.#sweepEvery = options.sweepEvery ?? 1000
  }

  async get(key: string): Promise<string | undefined> {
    return this.#live(key)?.value
  }

  async set(key: string, value: string, options?: SetOptions): Promise<void> {
    this.#write(key, value, options)
  }

  async setIfAbsent(key: string, value: string, options?: SetOptions): Promise<boolean> {
    if (this.#live(key)) return false
    this.#write(key, value, options)
    return true
  }

  async take(key: string): Promise<string | undefined> {
    const entry = this.#live(key)
    this.#entries.delete(key)
    return entry?.value
  }

  async delete(key: string): Promise<void> {
    this.#entries.delete(key)
  }

  async deleteIf(key: string, value: string): Promise<boolean> {
    if (this.#live(key)?.value !== value) return false
    return this.#entries.delete(key)
  }

  async replaceIf(
    key: string,
    current: string,
    next: string,
    options?: SetOptions,
  ): Promise<boolean> {
    if (this.#live(key)?.value !== current) return false
    this.#write(key, next, options)
    return true
  }

  async increment(key: string, by = 1, options?: SetOptions): Promise<number> {
    const entry = this.#live(key)
    if (!entry) {
      this.#write(key, String(by), options)
      return by
    }
    const current = Number(entry.value)
    if (!Number.isSafeInteger(current)) throw new TypeError(`"${key}" does not hold an integer`)
    const next = current + by
    entry.value = String(next)
    return next
  }

  async close(): Promise<void> {
    this.#entries.clear()
  }

  /** Number of entries held, expired ones included until the next sweep. */
  get size(): number {
    return this.#entries.size
  }

  #live(key: string): Entry | undefined {
    const entry = this.#entries.get(key)
    if (entry?.expiresAt !== undefined && entry.expiresAt <= this.#clock.now()) {
      this.#entries.delete(key)
      return undefined
    }
    return entry
  }

  #write(key: string, value: string, options?: SetOptions): void {
    const ttl = options?.ttlMs
    this.#entries.set(key, {
      value,
      expiresAt: ttl === undefined ? undefined : this.#clock.now() + ttl,
    })
    if (++this.#writes % this.#sweepEvery === 0) this.#sweep()
  }

  #sweep(): void {
    const now = this.#clock.now()
    for (const [key, entry] of this.#entries) {
      if (entry.expiresAt !== undefined && entry.expiresAt <= now) this.#entries.delete(key)
    }
  }
}
