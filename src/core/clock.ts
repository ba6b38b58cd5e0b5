/** Injected time, so expiry and rate windows are tested without sleeping. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/**
 * A clock that only moves when told to.
 * @example
 * ```ts
 * const clock = new ManualClock()
 * const kv = new MemoryKeyValueStore({ clock })
 * clock.advance(60_000)
 * ```
 */
export class ManualClock implements Clock {
  #now: number

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.#now = start
  }

  now(): number {
    return this.#now
  }

  advance(ms: number): void {
    this.#now += ms
  }
}
