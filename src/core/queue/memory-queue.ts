import { randomUUID } from 'node:crypto'
import type { Logger } from '../logger.ts'
import { logFailure } from '../outages.ts'
import {
  backoffDelay,
  type DeduplicationIds,
  defaultRetryPolicy,
  type EnqueueOptions,
  type FailedJob,
  type JobHandlers,
  postponement,
  type Queue,
  type QueueWorker,
  type RetryPolicy,
  toPlainJson,
  UnrecoverableJobError,
  type WorkOptions,
} from './queue.ts'

interface PendingJob {
  id: string
  name: string
  payload: unknown
  attempt: number
  attempts: number
  /** Times the job was postponed without spending an attempt. */
  postponed: number
}

/** Options of `new MemoryQueue()`. */
export interface MemoryQueueOptions {
  retry?: Partial<RetryPolicy>
  logger?: Logger
  /** Keeps at most this many failed jobs. */
  keepFailed?: number
  /** Remembers this many completed job ids, so a repeated `jobId` is not run again. */
  keepCompleted?: number
}

/**
 * An in-process queue: jobs run on this event loop after the request that queued them has
 * answered. Retries wait with exponential backoff. Nothing survives a restart: use BullMQ
 * (REDIS_URL) where that matters.
 * @example
 * ```ts
 * const queue = new MemoryQueue({ logger, keepFailed: 100 })
 * queue.work({ 'mail.send': async (payload) => logger.info({ payload }, 'sent') })
 * ```
 */
export class MemoryQueue implements Queue {
  readonly kind = 'memory'
  readonly #ready: PendingJob[] = []
  /** Ids of jobs waiting, running or waiting out a backoff. */
  readonly #ids = new Set<string>()
  /** Ids of recently completed jobs (insertion order, bounded), as BullMQ keeps them. */
  readonly #completed = new Set<string>()
  readonly #failed: FailedJob[] = []
  readonly #timers = new Set<NodeJS.Timeout>()
  readonly #policy: RetryPolicy
  readonly #logger: Logger | undefined
  readonly #keepFailed: number
  readonly #keepCompleted: number
  #handlers: JobHandlers | undefined
  #concurrency = 1
  #running = 0
  #closed = false
  /** Deduplication ids and when each stops counting (ms). */
  readonly #deduplication = new Map<string, number>()
  readonly deduplicationIds: DeduplicationIds = {
    claim: async (ids, ttlMs) => ids.filter((id) => this.#claim(id, ttlMs)),
    release: async (ids) => {
      for (const id of ids) this.#deduplication.delete(id)
    },
  }
  #idleWaiters: (() => void)[] = []

  constructor(options: MemoryQueueOptions = {}) {
    this.#policy = { ...defaultRetryPolicy, ...options.retry }
    this.#logger = options.logger
    this.#keepFailed = options.keepFailed ?? 1000
    this.#keepCompleted = options.keepCompleted ?? 1000
  }

  async enqueue(name: string, payload: unknown, options: EnqueueOptions = {}) {
    if (this.#closed) throw new Error('queue is closed')
    const id = options.jobId || randomUUID()
    if (this.#ids.has(id) || this.#completed.has(id) || this.#failed.some((f) => f.id === id)) {
      return { id }
    }
    // A JSON round trip: handlers get the same plain data BullMQ would give them.
    const plain = toPlainJson(payload)
    const dedup = options.deduplication
    if (dedup && !this.#claim(dedup.id, dedup.ttlMs)) return { id }
    this.#ids.add(id)
    this.#ready.push({
      id,
      name,
      payload: plain,
      attempt: 1,
      attempts: options.attempts ?? this.#policy.attempts,
      postponed: 0,
    })
    // After the current turn: the request that queued the job answers before the job starts.
    setImmediate(() => this.#pump())
    return { id }
  }

  /** Records `id` unless it was recorded in the last `ttlMs`; true when this call recorded it. */
  #claim(id: string, ttlMs: number): boolean {
    const now = Date.now()
    const until = this.#deduplication.get(id)
    if (until !== undefined && until > now) return false
    // Delete first, so the map stays in order of expiry and the oldest ids are dropped first.
    this.#deduplication.delete(id)
    this.#deduplication.set(id, now + ttlMs)
    for (const [seen, expires] of this.#deduplication) {
      if (expires > now) break
      this.#deduplication.delete(seen)
    }
    return true
  }

  work(handlers: JobHandlers, options: WorkOptions = {}): QueueWorker {
    if (this.#handlers) throw new TypeError('MemoryQueue: work() was already called')
    this.#handlers = handlers
    this.#concurrency = Math.max(1, options.concurrency ?? 1)
    setImmediate(() => this.#pump())
    return {
      close: async () => {
        await this.drain()
        this.#handlers = undefined
      },
    }
  }

  async failed(limit = 50): Promise<FailedJob[]> {
    return this.#failed.slice(0, limit)
  }

  drain(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve()
    return new Promise((resolve) => this.#idleWaiters.push(resolve))
  }

  /** Finishes the jobs that are ready or running; retries still waiting out a backoff are dropped. */
  async close(): Promise<void> {
    this.#closed = true
    if (this.#timers.size > 0) {
      this.#logger?.warn({ waiting: this.#timers.size }, 'queue closed with retries still waiting')
    }
    for (const timer of this.#timers) clearTimeout(timer)
    this.#timers.clear()
    this.#notifyIfIdle()
    if (this.#handlers) await this.drain()
  }

  #isIdle(): boolean {
    if (this.#running > 0 || this.#timers.size > 0) return false
    return this.#ready.length === 0 || !this.#handlers
  }

  #pump(): void {
    while (this.#handlers && this.#running < this.#concurrency && this.#ready.length > 0) {
      const job = this.#ready.shift() as PendingJob
      this.#running++
      void this.#run(job).finally(() => {
        this.#running--
        this.#pump()
        this.#notifyIfIdle()
      })
    }
  }

  #notifyIfIdle(): void {
    if (this.#isIdle()) for (const resolve of this.#idleWaiters.splice(0)) resolve()
  }

  async #run(job: PendingJob): Promise<void> {
    const handler = this.#handlers?.[job.name]
    try {
      if (!handler) throw new UnrecoverableJobError(`no handler for job "${job.name}"`)
      await handler(job.payload, { id: job.id, name: job.name, attempt: job.attempt })
      this.#ids.delete(job.id)
      this.#completed.add(job.id)
      if (this.#completed.size > this.#keepCompleted) {
        this.#completed.delete(this.#completed.values().next().value as string)
      }
    } catch (error) {
      this.#retryOrFail(job, error)
    }
  }

  #retryOrFail(job: PendingJob, error: unknown): void {
    const message = error instanceof Error ? error.message : String(error)
    const fields = { job: job.name, id: job.id, attempt: job.attempt, err: message }
    const postponeMs = postponement(error)
    if (postponeMs !== undefined && job.postponed < this.#policy.postponements && !this.#closed) {
      this.#logger?.info({ ...fields, delayMs: postponeMs }, 'job postponed')
      this.#later({ ...job, postponed: job.postponed + 1 }, postponeMs)
      return
    }
    const permanent = error instanceof UnrecoverableJobError
    if (!permanent && job.attempt < job.attempts && !this.#closed) {
      logFailure(this.#logger, 'warn', error, fields, 'job failed, retrying')
      this.#later({ ...job, attempt: job.attempt + 1 }, backoffDelay(this.#policy, job.attempt))
      return
    }
    this.#ids.delete(job.id)
    this.#logger?.error(
      { job: job.name, id: job.id, attempts: job.attempt, err: message },
      'job failed',
    )
    this.#failed.unshift({
      id: job.id,
      name: job.name,
      payload: job.payload,
      error: message,
      attempts: job.attempt,
      failedAt: new Date(),
    })
    this.#failed.length = Math.min(this.#failed.length, this.#keepFailed)
  }

  /** Puts `job` back in the ready list after `delayMs`. */
  #later(job: PendingJob, delayMs: number): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer)
      this.#ready.push(job)
      this.#pump()
    }, delayMs)
    this.#timers.add(timer)
  }
}
