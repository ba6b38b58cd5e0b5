import type { Clock } from '../../core/clock.ts'
import type { Logger } from '../../core/logger.ts'

export interface LastUsedRecorderOptions {
  clock: Clock
  logger: Logger | undefined
  /** A key's `last_used_at` is written at most once per interval. */
  intervalMs: number
  /** Uses are collected this long and written in one statement, after the responses. */
  flushDelayMs: number
  write(ids: number[], at: Date, intervalMs: number): Promise<void>
}

/**
 * Records that verified keys were used, off the request path: a use only marks the key in
 * memory; a timer writes the marked keys in one UPDATE later. Failed writes are logged and
 * dropped (the next use a minute later tries again), never retried in a loop.
 */
export class LastUsedRecorder {
  readonly #options: LastUsedRecorderOptions
  /** Last write (or the value read from the row) per key id, in ms. */
  readonly #written = new Map<number, number>()
  readonly #pending = new Map<number, number>()
  #timer: NodeJS.Timeout | undefined
  #flushing: Promise<void> | undefined

  constructor(options: LastUsedRecorderOptions) {
    this.#options = options
  }

  /** What the row said, so a restarted instance does not rewrite a fresh value. */
  seed(id: number, lastUsedAt: Date | null): void {
    if (lastUsedAt && !this.#written.has(id)) this.#written.set(id, lastUsedAt.getTime())
  }

  /** Called only after a key was verified. */
  used(id: number): void {
    const now = this.#options.clock.now()
    const last = this.#written.get(id)
    if (last !== undefined && now - last < this.#options.intervalMs) return
    this.#written.set(id, now)
    this.#pending.set(id, now)
    if (!this.#timer) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined
        void this.flush()
      }, this.#options.flushDelayMs)
      this.#timer.unref()
    }
  }

  /** Writes what is pending now (tests, shutdown). */
  async flush(): Promise<void> {
    if (this.#timer) {
      clearTimeout(this.#timer)
      this.#timer = undefined
    }
    await this.#flushing
    if (this.#pending.size === 0) return
    const ids = [...this.#pending.keys()]
    const at = Math.max(...this.#pending.values())
    this.#pending.clear()
    this.#flushing = this.#options
      .write(ids, new Date(at), this.#options.intervalMs)
      .catch((error: unknown) => {
        this.#options.logger?.warn(
          { err: error, keys: ids.length },
          'Could not record when API keys were last used',
        )
      })
    await this.#flushing
    this.#flushing = undefined
  }
}
