import { firstLineOf } from '../../core/first-line.ts'
import type { Logger } from '../../core/index.ts'
import type { AuditEntry } from '../../db/index.ts'

/**
 * The entries waiting for their insert, written in batches, one write at a time and in order.
 * A failed insert keeps them for the next flush (the database may be back by then); past
 * `maxBuffered` new entries are dropped and counted, since the head may be in flight.
 */
export class AuditBuffer {
  #entries: AuditEntry[] = []
  #writing: Promise<void> = Promise.resolve()
  #dropped = 0

  constructor(
    private readonly insert: (batch: AuditEntry[]) => Promise<unknown>,
    private readonly limits: { batchSize: number; maxBuffered: number },
    private readonly logger: Logger | undefined,
  ) {}

  get size(): number {
    return this.#entries.length
  }

  /** Buffers an entry; a full batch is written at once. */
  add(entry: AuditEntry): void {
    if (this.#entries.length >= this.limits.maxBuffered) {
      this.#dropped += 1
      return
    }
    this.#entries.push(entry)
    if (this.#entries.length >= this.limits.batchSize) void this.flush()
  }

  flush(): Promise<void> {
    this.#writing = this.#writing.then(() => this.#write())
    return this.#writing
  }

  async #write(): Promise<void> {
    while (this.#entries.length > 0) {
      const batch = this.#entries.slice(0, this.limits.batchSize)
      try {
        await this.insert(batch)
        this.#entries = this.#entries.slice(batch.length)
      } catch (error) {
        this.logger?.error(
          { error: firstLineOf(error), buffered: this.#entries.length },
          'mcp audit: could not write the audit trail; will retry',
        )
        return
      }
    }
    if (this.#dropped > 0) {
      this.logger?.warn(
        { dropped: this.#dropped },
        'mcp audit: entries were dropped while the database was unavailable',
      )
      this.#dropped = 0
    }
  }
}
