/** One bucket's count in its current window. */
export interface WindowCount {
  /** Requests counted in this window, this one included. */
  count: number
  /** Milliseconds until the window ends. */
  msLeft: number
}

/** A bucket's count and the time its window ends. */
interface Window {
  count: number
  endsAt: number
}

/**
 * Fixed-window request counts in this process's memory, the memory side of
 * `createRateLimiters`: a bucket's window opens at its first request and lasts `durationMs`;
 * the first request after it ends opens a new one.
 *
 * Why not a timer per bucket (what general-purpose limiters do): every request would then
 * allocate a timer or a result object, which measured as about a tenth of a cached API
 * request. Ended windows are swept instead, at most once per `durationMs` and only while
 * requests come, so memory holds the buckets of about two windows at most.
 */
export class MemoryWindows {
  readonly #windows = new Map<string, Window>()
  readonly #durationMs: number
  readonly #now: () => number
  #nextSweep: number

  constructor(durationMs: number, now: () => number = Date.now) {
    this.#durationMs = durationMs
    this.#now = now
    this.#nextSweep = now() + durationMs
  }

  /** Counts one request in `key`'s bucket. */
  consume(key: string): WindowCount {
    const now = this.#now()
    if (now >= this.#nextSweep) this.#sweep(now)
    let window = this.#windows.get(key)
    if (window === undefined || window.endsAt <= now) {
      window = { count: 0, endsAt: now + this.#durationMs }
      this.#windows.set(key, window)
    }
    window.count++
    return { count: window.count, msLeft: window.endsAt - now }
  }

  /** `key`'s bucket without counting; undefined when its window has ended or never began. */
  get(key: string): WindowCount | undefined {
    const now = this.#now()
    const window = this.#windows.get(key)
    if (window === undefined || window.endsAt <= now) return undefined
    return { count: window.count, msLeft: window.endsAt - now }
  }

  /** Takes back one request counted in `key`'s open window. */
  refund(key: string): void {
    const window = this.#windows.get(key)
    if (window !== undefined && window.endsAt > this.#now() && window.count > 0) window.count--
  }

  delete(key: string): void {
    this.#windows.delete(key)
  }

  /** Buckets held, ended ones not yet swept included. */
  get size(): number {
    return this.#windows.size
  }

  #sweep(now: number): void {
    for (const [key, window] of this.#windows) {
      if (window.endsAt <= now) this.#windows.delete(key)
    }
    this.#nextSweep = now + this.#durationMs
  }
}
