import { Queue as BullQueue, UnrecoverableError, Worker } from 'bullmq'
import type { Logger } from '../logger.ts'
import type { RedisConnections } from '../redis.ts'
import {
  defaultRetryPolicy,
  type EnqueueOptions,
  type FailedJob,
  type JobHandlers,
  type Queue,
  type QueueWorker,
  type RetryPolicy,
  UnrecoverableJobError,
  type WorkOptions,
} from './queue.ts'

export interface BullMqQueueOptions {
  connections: RedisConnections
  /** Queue name; several apps on one Redis use different names or prefixes. */
  name?: string
  prefix?: string
  retry?: Partial<RetryPolicy>
  logger?: Logger
}

/**
 * BullMQ on Redis. Producers fail fast when Redis is down (the caller answers 500 and the
 * provider retries); workers block and reconnect. A worker killed mid-job leaves the job
 * active; BullMQ's stalled-job check hands it to another worker.
 */
export class BullMqQueue implements Queue {
  readonly #connections: BullMqQueueOptions['connections']
  readonly #queue: BullQueue
  readonly #name: string
  readonly #prefix: string | undefined
  readonly #policy: RetryPolicy
  readonly #logger: Logger | undefined
  readonly #workers = new Set<Worker>()

  constructor(options: BullMqQueueOptions) {
    this.#connections = options.connections
    this.#name = options.name ?? 'kiln'
    this.#prefix = options.prefix
    this.#policy = { ...defaultRetryPolicy, ...options.retry }
    this.#logger = options.logger
    this.#queue = new BullQueue(this.#name, {
      connection: options.connections.connect({ name: 'kiln-queue' }),
      prefix: this.#prefix,
    })
    this.#queue.on('error', (err) => this.#logger?.error({ err }, 'queue connection error'))
  }

  async enqueue(name: string, payload: unknown, options: EnqueueOptions = {}) {
    const job = await this.#queue.add(name, payload, {
      jobId: options.jobId,
      attempts: options.attempts ?? this.#policy.attempts,
      backoff: { type: 'exponential', delay: this.#policy.backoffMs },
      removeOnComplete: { count: 1000 },
      removeOnFail: false,
    })
    return { id: String(job.id) }
  }

  work(handlers: JobHandlers, options: WorkOptions = {}): QueueWorker {
    const worker = new Worker(
      this.#name,
      async (job) => {
        const handler = handlers[job.name]
        if (!handler) throw new UnrecoverableError(`no handler for job "${job.name}"`)
        try {
          await handler(job.data, {
            id: String(job.id),
            name: job.name,
            attempt: job.attemptsMade + 1,
          })
        } catch (error) {
          if (error instanceof UnrecoverableJobError) throw new UnrecoverableError(error.message)
          throw error
        }
      },
      {
        connection: this.#connections.connect({ blocking: true, name: 'kiln-worker' }),
        prefix: this.#prefix,
        concurrency: Math.max(1, options.concurrency ?? 1),
      },
    )
    worker.on('failed', (job, err) => {
      this.#logger?.warn(
        { job: job?.name, id: job?.id, attempt: job?.attemptsMade, err: err.message },
        'job failed',
      )
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
      id: String(job.id),
      name: job.name,
      payload: job.data,
      error: job.failedReason,
      attempts: job.attemptsMade,
      failedAt: new Date(job.finishedOn ?? job.timestamp),
    }))
  }

  /** Waits until nothing is waiting, delayed or active in the queue. Polls: BullMQ has no idle event. */
  async drain(): Promise<void> {
    for (;;) {
      const counts = await this.#queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized')
      if (Object.values(counts).every((n) => n === 0)) return
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.#workers].map((worker) => worker.close()))
    this.#workers.clear()
    await this.#queue.close()
  }
}
