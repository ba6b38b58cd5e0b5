import type { Queue as BullQueue, JobsOptions, Worker } from 'bullmq'
import { corkUntilTheLoopTurns } from '../cork.ts'
import { DependencyError } from '../errors.ts'
import type { Logger } from '../logger.ts'
import { requireOptional } from '../optional-package.ts'
import { logFailure } from '../outages.ts'
import { pingRedis, type Redis, type RedisConnections } from '../redis.ts'
import {
  type DeduplicationIds,
  defaultRetryPolicy,
  type EnqueueOptions,
  type FailedJob,
  isPlainJson,
  type JobHandlers,
  postponement,
  type Queue,
  type QueueWorker,
  type RetryPolicy,
  toPlainJson,
  UnrecoverableJobError,
  type WorkOptions,
} from './queue.ts'

/** Options of `new BullMqQueue()`. */
export interface BullMqQueueOptions {
  connections: RedisConnections
  /** Queue name; several apps on one Redis use different names or prefixes. */
  name?: string
  prefix?: string
  retry?: Partial<RetryPolicy>
  logger?: Logger
  /**
   * Coalesce `enqueue` calls made in the same turn of the event loop into one write to Redis
   * (default true). Each caller still resolves only once Redis has its job.
   */
  coalesce?: boolean
  /** How long a worker's lock on a running job lasts; renewed at half of it (default 30 s). */
  lockDurationMs?: number
  /** How often workers look for jobs whose worker died, to run them again (default 30 s). */
  stalledIntervalMs?: number
  /** Times a job may stall (its worker died) before it fails (default 1). */
  maxStalledCount?: number
  /** Completed jobs kept (and their ids deduplicated) per queue (default 1000). */
  keepCompleted?: number
  /** An enqueue that Redis has not confirmed within this time rejects (default 10 s). */
  enqueueTimeoutMs?: number
  /** Most jobs sent in one write; a larger burst goes out as several (default 50). */
  maxBatch?: number
}

interface PendingAdd {
  name: string
  data: unknown
  opts: JobsOptions
  callerId: string | undefined
  resolve(value: { id: string }): void
  reject(error: unknown): void
}

/** BullMQ, required on first use: an app without REDIS_URL needs no bullmq installed. */
function bullmq(): typeof import('bullmq') {
  return requireOptional<typeof import('bullmq')>('bullmq', 'The Redis job queue (REDIS_URL)')
}

/**
 * BullMQ on Redis. Producers fail fast when Redis is down (the caller answers 500 and the
 * provider retries); workers block and reconnect. A worker killed mid-job leaves the job
 * active with a lock that is no longer renewed; once it expires, another worker's stalled-job
 * check puts the job back in the waiting list and it runs again.
 * @example
 * ```ts
 * const connections = new RedisConnections('redis://127.0.0.1:6379')
 * const queue = new BullMqQueue({ connections, name: 'mail', logger })
 * await queue.enqueue('mail.send', { to: 'ada@example.com' })
 * ```
 */
export class BullMqQueue implements Queue {
  readonly kind = 'bullmq'
  readonly #connections: RedisConnections
  readonly #producer: Redis
  readonly #queue: BullQueue
  readonly #name: string
  readonly #prefix: string | undefined
  readonly #policy: RetryPolicy
  readonly #logger: Logger | undefined
  readonly #options: BullMqQueueOptions
  readonly #workers = new Set<Worker>()
  readonly #inFlight = new Set<Promise<void>>()
  #batch: PendingAdd[] = []
  #flushScheduled: NodeJS.Immediate | undefined
  #closed = false
  #reportedDown = false
  #unreachable: { at: number; error: DependencyError } | undefined
  /** The one reachability check in flight, shared by every call that waits on it. */
  #checking: Promise<void> | undefined

  constructor(options: BullMqQueueOptions) {
    this.#options = options
    this.#connections = options.connections
    this.#name = options.name ?? 'kiln'
    this.#prefix = options.prefix
    this.#policy = { ...defaultRetryPolicy, ...options.retry }
    this.#logger = options.logger
    this.#producer = options.connections.connect({ name: 'kiln-queue' })
    this.#producer.on('ready', () => {
      this.#reportedDown = false
    })
    this.#queue = new (bullmq().Queue)(this.#name, {
      connection: this.#producer,
      prefix: this.#prefix,
    })
    // One line per outage, not one per reconnection attempt.
    this.#queue.on('error', (err) => {
      if (this.#reportedDown) return
      this.#reportedDown = true
      this.#logger?.error({ err }, 'queue connection error')
    })
  }

  /** The ids `deduplication` records: BullMQ's own keys (`<prefix>:<queue>:de:<id>`). */
  readonly deduplicationIds: DeduplicationIds = {
    claim: async (ids, ttlMs) => {
      if (ids.length === 0) return []
      const pipeline = this.#producer.pipeline()
      for (const id of ids) pipeline.set(this.#deduplicationKey(id), '1', 'PX', ttlMs, 'NX')
      const results = (await pipeline.exec()) ?? []
      return ids.filter((_, index) => {
        const [error, reply] = results[index] ?? [new Error('no reply')]
        if (error)
          throw new DependencyError(`could not record a deduplication id: ${error.message}`, {
            cause: error,
          })
        return reply === 'OK'
      })
    },
    release: async (ids) => {
      if (ids.length > 0) await this.#producer.del(...ids.map((id) => this.#deduplicationKey(id)))
    },
  }

  #deduplicationKey(id: string): string {
    return `${this.#queue.keys.de}:${id}`
  }

  enqueue(name: string, payload: unknown, options: EnqueueOptions = {}): Promise<{ id: string }> {
    if (this.#closed) return Promise.reject(new Error('queue is closed'))
    let data: unknown
    try {
      // BullMQ serializes the data itself when the batch is sent (before `enqueue` resolves):
      // only a payload that JSON would change is copied first.
      data = isPlainJson(payload) ? payload : toPlainJson(payload)
    } catch (error) {
      return Promise.reject(error)
    }
    const callerId = options.jobId || undefined
    const opts: JobsOptions = {
      jobId: callerId === undefined ? undefined : encodeJobId(callerId),
      attempts: options.attempts ?? this.#policy.attempts,
      backoff: { type: 'exponential', delay: this.#policy.backoffMs },
      removeOnComplete: { count: this.#options.keepCompleted ?? 1000 },
      removeOnFail: false,
    }
    // BullMQ's own deduplication in its add script: SET NX PX on the id, then the add, in one
    // atomic round trip (its "throttle mode": the id lasts ttl whatever becomes of the job).
    if (options.deduplication) {
      opts.deduplication = { id: options.deduplication.id, ttl: options.deduplication.ttlMs }
    }
    return new Promise((resolve, reject) => {
      this.#batch.push({ name, data, opts, callerId, resolve, reject })
      if (
        this.#options.coalesce === false ||
        this.#batch.length >= (this.#options.maxBatch ?? 50)
      ) {
        this.#flush()
      } else {
        this.#flushScheduled ??= setImmediate(() => this.#flush())
      }
    })
  }

  /** Sends every call waiting in the batch, in one write to Redis. */
  #flush(): void {
    if (this.#flushScheduled) clearImmediate(this.#flushScheduled)
    this.#flushScheduled = undefined
    const batch = this.#batch
    this.#batch = []
    if (batch.length === 0) return
    const sent = this.#send(batch).finally(() => this.#inFlight.delete(sent))
    this.#inFlight.add(sent)
  }

  /**
   * Each job is its own BullMQ `add` (one EVALSHA of its add script), so each caller gets its
   * own job's outcome. They are written while the producer's socket is corked and leave in one
   * write, as a pipeline's would, without what an ioredis pipeline costs per batch and per job
   * (a property per BullMQ script on every pipeline, every command copied into one more buffer):
   * measured, less Node CPU per job than both `addBulk` and separate writes.
   */
  async #send(batch: PendingAdd[]): Promise<void> {
    const timeoutMs = this.#options.enqueueTimeoutMs ?? 10_000
    let timer: NodeJS.Timeout | undefined
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`Redis did not confirm the job within ${timeoutMs} ms`)),
        timeoutMs,
      )
    })
    try {
      await this.#connected()
      // BullMQ writes each command a few microtasks after `add` is called: the socket stays
      // corked until the loop turns, so the batch leaves in one write.
      if (batch.length > 1 && this.#producer.status === 'ready')
        corkUntilTheLoopTurns(this.#producer.stream)
      const added = batch.map((pending) =>
        this.#queue.add(pending.name, pending.data, pending.opts).then(
          (stored) => pending.resolve({ id: pending.callerId ?? String(stored.id) }),
          (cause: unknown) => pending.reject(enqueueError(cause)),
        ),
      )
      await Promise.race([Promise.all(added), expired])
    } catch (cause) {
      // Settling a call twice does nothing: this rejects the ones Redis has not confirmed.
      for (const pending of batch) pending.reject(enqueueError(cause))
    } finally {
      clearTimeout(timer)
    }
  }

  /**
   * A producer that is not connected asks Redis once, with bounded retries, instead of waiting
   * (as BullMQ would) for a connection that may never come.
   */
  async #connected(): Promise<void> {
    if (this.#producer.status === 'ready') return
    // During an outage, calls within a second of a failed check fail at once.
    const known = this.#unreachable
    if (known && Date.now() - known.at < 1_000) throw known.error
    this.#checking ??= pingRedis(this.#producer, this.#connections.url)
      .then(() => {
        this.#unreachable = undefined
      })
      .catch((cause: Error) => {
        const error = new DependencyError(cause.message, { cause })
        this.#unreachable = { at: Date.now(), error }
        throw error
      })
      .finally(() => {
        this.#checking = undefined
      })
    await this.#checking
  }

  work(handlers: JobHandlers, options: WorkOptions = {}): QueueWorker {
    const { DelayedError, UnrecoverableError, Worker } = bullmq()
    const worker = new Worker(
      this.#name,
      async (job, token) => {
        const handler = handlers[job.name]
        if (!handler) throw new UnrecoverableError(`no handler for job "${job.name}"`)
        const id = decodeJobId(String(job.id))
        try {
          await handler(job.data, { id, name: job.name, attempt: job.attemptsMade + 1 })
        } catch (error) {
          if (error instanceof UnrecoverableJobError) throw new UnrecoverableError(error.message)
          const postponeMs = postponement(error)
          // Every start that did not end in a counted failure was a postponement (or a stall,
          // which counts towards the bound as well).
          const postponed = job.attemptsStarted - 1 - job.attemptsMade
          if (postponeMs === undefined || postponed >= this.#policy.postponements) throw error
          const fields = { job: job.name, id, attempt: job.attemptsMade + 1, delayMs: postponeMs }
          this.#logger?.info({ ...fields, err: (error as Error).message }, 'job postponed')
          // Delayed without spending an attempt; DelayedError tells BullMQ the job was moved.
          await job.moveToDelayed(Date.now() + postponeMs, token)
          throw new DelayedError()
        }
      },
      {
        connection: this.#connections.connect({ blocking: true, name: 'kiln-worker' }),
        prefix: this.#prefix,
        concurrency: Math.max(1, options.concurrency ?? 1),
        lockDuration: this.#options.lockDurationMs ?? 30_000,
        stalledInterval: this.#options.stalledIntervalMs ?? 30_000,
        maxStalledCount: this.#options.maxStalledCount ?? 1,
      },
    )
    worker.on('failed', (job, err) => {
      if (!job) return
      const final =
        err.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1)
      const fields = {
        job: job.name,
        id: decodeJobId(String(job.id)),
        attempt: job.attemptsMade,
        err: err.message,
      }
      if (final) this.#logger?.error(fields, 'job failed')
      else logFailure(this.#logger, 'warn', err, fields, 'job failed, retrying')
    })
    worker.on('error', (err) => this.#logger?.error({ err }, 'worker error'))
    this.#workers.add(worker)
    return {
      close: async () => {
        await worker.close()
        this.#workers.delete(worker)
      },
    }
  }

  async failed(limit = 50): Promise<FailedJob[]> {
    const jobs = await this.#queue.getFailed(0, limit - 1)
    return jobs.map((job) => ({
      id: decodeJobId(String(job.id)),
      name: job.name,
      payload: job.data,
      error: job.failedReason,
      attempts: job.attemptsMade,
      failedAt: new Date(job.finishedOn ?? job.timestamp),
    }))
  }

  /**
   * With a worker in this process: waits until nothing is waiting, delayed or running in the
   * queue (polling: BullMQ has no idle event). Without one it returns at once; the jobs are
   * safe in Redis for the workers that run them.
   */
  async drain(): Promise<void> {
    await Promise.all([...this.#inFlight])
    while (this.#workers.size > 0) {
      const counts = await this.#queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized')
      if (Object.values(counts).every((n) => n === 0)) return
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  /** Sends what is batched, lets running jobs finish, then closes. Does not wait for retries. */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    this.#flush()
    await Promise.allSettled([...this.#inFlight])
    await Promise.all([...this.#workers].map((worker) => worker.close()))
    this.#workers.clear()
    await this.#queue.close()
  }
}

function enqueueError(cause: unknown): DependencyError {
  return cause instanceof DependencyError
    ? cause
    : new DependencyError(`could not enqueue: ${(cause as Error).message}`, { cause })
}

/**
 * BullMQ refuses custom ids that look like integers or contain `:`; such ids (and those
 * starting with `~`) are stored as `~` + base64url, so any string works as a `jobId`.
 */
export function encodeJobId(id: string): string {
  const safe = !id.includes(':') && !id.startsWith('~') && `${Number.parseInt(id, 10)}` !== id
  return safe ? id : `~${Buffer.from(id).toString('base64url')}`
}

export function decodeJobId(id: string): string {
  return id.startsWith('~') ? Buffer.from(id.slice(1), 'base64url').toString() : id
}
