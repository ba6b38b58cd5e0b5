/** Options of `KeyValueStore.set`. */
export interface SetOptions {
  /** Time to live in milliseconds; without it the entry never expires. */
  ttlMs?: number
}

/**
 * Shared short-lived state: one-time codes, device grants, dedup marks, sessions, throttles.
 * Memory for one process; Redis when `REDIS_URL` is set, so many instances see the same data.
 */
export interface KeyValueStore {
  get(key: string): Promise<string | undefined>
  set(key: string, value: string, options?: SetOptions): Promise<void>
  /** Stores the value only if the key is absent; true when this call stored it. Atomic. */
  setIfAbsent(key: string, value: string, options?: SetOptions): Promise<boolean>
  /** Reads and deletes in one step: of many concurrent callers exactly one gets the value. */
  take(key: string): Promise<string | undefined>
  delete(key: string): Promise<void>
  /**
   * Deletes the key only while it holds `value`; true when this call deleted it. Atomic: a
   * holder undoes its own entry (a claim, say) without touching one another holder set since.
   */
  deleteIf(key: string, value: string): Promise<boolean>
  /**
   * Sets the key to `next` (with `options`' TTL) only while it holds `current`; true when
   * this call set it. Atomic: a holder renews its own entry (a claim, say) and never takes
   * back one another holder set since its own expired.
   */
  replaceIf(key: string, current: string, next: string, options?: SetOptions): Promise<boolean>
  /**
   * Adds `by` to an integer counter and returns the new value. The TTL is set when the
   * counter is created and not extended by later increments (a fixed window).
   */
  increment(key: string, by?: number, options?: SetOptions): Promise<number>
  close(): Promise<void>
}
