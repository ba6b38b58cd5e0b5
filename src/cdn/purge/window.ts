import type { Clock } from '../../core/clock.ts'
import type { WindowLimit } from '../../core/http/rate-limiters.ts'

/**
 * At most `points` requests in any sliding window of `durationSeconds` (a core `WindowLimit`): `acquire()` waits (through the
 * injected sleep) until a slot is free, then takes it.
 */
export class SlidingWindow {
  readonly #limit: number
  readonly #windowMs: number
  readonly #clock: Clock
  readonly #sleep: (ms: number) => Promise<void>
  readonly #taken: number[] = []
  #queue: Promise<void> = Promise.resolve()

  constructor(window: WindowLimit, clock: Clock, sleep: (ms: number) => Promise<void>) {
    this.#limit = window.points
    this.#windowMs = windowMsOf(window)
    this.#clock = clock
    this.#sleep = sleep
  }

  /** Resolves once a request may be sent; callers are served in order. */
  acquire(): Promise<void> {
    const next = this.#queue.then(() => this.#take())
    this.#queue = next.catch(() => {})
    return next
  }

  async #take(): Promise<void> {
    for (;;) {
      const now = this.#clock.now()
      while (this.#taken.length > 0 && this.#taken[0]! <= now - this.#windowMs) this.#taken.shift()
      if (this.#taken.length < this.#limit) {
        this.#taken.push(now)
        return
      }
      await this.#sleep(this.#taken[0]! + this.#windowMs - now)
    }
  }
}

/** A `WindowLimit`'s window in milliseconds (60 s when it names none, as the limiters do). */
export function windowMsOf(window: WindowLimit): number {
  return (window.durationSeconds ?? 60) * 1000
}
