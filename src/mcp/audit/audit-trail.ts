import { type Clock, systemClock } from '../../core/clock.ts'
import { firstLineOf } from '../../core/first-line.ts'
import type { Logger } from '../../core/index.ts'
import { type AuditEntry, type AuditLog, createAuditLog, type Database } from '../../db/index.ts'
import { AuditBuffer } from './audit-buffer.ts'

/** Options of `createAuditTrail`. */
export interface AuditTrailOptions {
  /** The app's database, migrated (`kiln_mcp_audit`). */
  database?: Database | undefined
  /** Or the table itself (`createAuditLog(database)`). */
  log?: AuditLog | undefined
  /**
   * Record the values a create or update wrote (credential fields are never recorded).
   * Default false: names of fields only.
   */
  values?: boolean | undefined
  /** How often buffered entries are written. Default 1000 ms. */
  flushIntervalMs?: number | undefined
  /** Entries written per statement; a full batch is written at once. Default 100. */
  batchSize?: number | undefined
  /**
   * Entries kept in memory while the database cannot be written; past that new ones are
   * dropped (and the count logged). Default 10,000.
   */
  maxBuffered?: number | undefined
  /** Entries older than this many days are deleted (hourly). Default 90; `null` keeps all. */
  retentionDays?: number | null | undefined
  /** How often old entries are pruned. Default one hour. */
  pruneIntervalMs?: number | undefined
  logger?: Logger | undefined
  clock?: Clock | undefined
}

/** Where the data tools report each call; written off the call's path, in batches. */
export interface AuditTrail {
  /** Whether entries carry the written values. */
  readonly recordsValues: boolean
  /** Buffers one entry; never throws and never waits for the database. */
  record(entry: AuditEntry): void
  /** Writes everything buffered now. */
  flush(): Promise<void>
  /** Deletes entries past the retention; returns how many. */
  prune(): Promise<number>
  /**
   * Writes what is buffered, then closes the approvals still awaiting the person at `before`
   * with an `expired` entry (the data tools call it, at most once a minute, with their TTL).
   */
  closeExpiredApprovals(before: Date): Promise<number>
  /** Stops the timers and writes what is still buffered: call it on shutdown. */
  close(): Promise<void>
}

const DAY_MS = 86_400_000

/**
 * The audit trail of the data tools over the app's database. Calls are recorded in memory and
 * written in batches (every `flushIntervalMs`, or as soon as a batch is full), so a tool call
 * never waits for the audit insert; `close()` writes the rest. Give it to the data tools:
 * `createDataTools({ ..., audit })`.
 *
 * @example
 * ```ts
 * const audit = createAuditTrail({ database, retentionDays: 30 })
 * const tools = createDataTools({ database, models, audit })
 * // on shutdown
 * await audit.close()
 * ```
 */
export function createAuditTrail(options: AuditTrailOptions): AuditTrail {
  const log = options.log ?? (options.database ? createAuditLog(options.database) : undefined)
  if (!log) throw new TypeError('createAuditTrail: give `database` (or `log`)')
  const flushIntervalMs = positive(options.flushIntervalMs ?? 1000, 'flushIntervalMs')
  const batchSize = positive(options.batchSize ?? 100, 'batchSize')
  const maxBuffered = Math.max(positive(options.maxBuffered ?? 10_000, 'maxBuffered'), batchSize)
  const retentionDays = options.retentionDays === undefined ? 90 : options.retentionDays
  if (retentionDays !== null) positive(retentionDays, 'retentionDays')
  const pruneIntervalMs = positive(options.pruneIntervalMs ?? 3_600_000, 'pruneIntervalMs')
  const clock = options.clock ?? systemClock
  const logger = options.logger

  const buffer = new AuditBuffer((batch) => log.insert(batch), { batchSize, maxBuffered }, logger)
  const flush = () => buffer.flush()
  let closed = false
  const prune = async () => {
    if (retentionDays === null) return 0
    return log.prune(new Date(clock.now() - retentionDays * DAY_MS))
  }

  const flushTimer = setInterval(() => void flush(), flushIntervalMs)
  flushTimer.unref()
  const pruneTimer =
    retentionDays === null
      ? undefined
      : setInterval(() => {
          prune().catch((error: unknown) =>
            logger?.error(
              { error: firstLineOf(error) },
              'mcp audit: could not prune the audit trail',
            ),
          )
        }, pruneIntervalMs)
  pruneTimer?.unref()

  return {
    recordsValues: options.values === true,
    record(entry) {
      if (closed) {
        logger?.warn({ tool: entry.tool }, 'mcp audit: an entry came after close; writing it alone')
        void log.insert([entry]).catch(() => {})
        return
      }
      // Past the bound (the database has been failing for a while) new entries are dropped.
      buffer.add(entry)
    },
    flush,
    prune,
    async closeExpiredApprovals(before) {
      await flush()
      return log.closeExpiredApprovals(before, new Date(clock.now()))
    },
    async close() {
      if (closed) return buffer.flush()
      closed = true
      clearInterval(flushTimer)
      if (pruneTimer) clearInterval(pruneTimer)
      await flush()
      if (buffer.size > 0) {
        logger?.error({ lost: buffer.size }, 'mcp audit: entries could not be written on close')
      }
    },
  }
}

function positive(value: number, name: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new TypeError(`createAuditTrail: ${name} must be a positive number`)
  }
  return value
}
