import { backoffDelayMs } from '../retry.ts'

/** The job a handler is running: its id, name and attempt. */
export interface JobContext {
  id: string
  name: string
  /** 1 on the first run, 2 on the first retry, … */
  attempt: number
}

/** Runs one job's payload; throwing fails the run (retried under the queue's policy). */
// biome-ignore lint/suspicious/noExplicitAny: handlers narrow their own payload type.
export type JobHandler<Payload = any> = (payload: Payload, job: JobContext) => Promise<void>
/** The handlers of a queue, by job name. */
export type JobHandlers = Record<string, JobHandler>

/** Options of `Queue.enqueue`. */
export interface EnqueueOptions {
  /** A job with the same id already queued is not added again. */
  jobId?: string
  /** Runs in all, the first included; default from the queue's options. */
  attempts?: number
  /**
   * Not added when an id in `ids` was recorded in the last `ttlMs`: checking `id`, recording
   * it and adding the job are one atomic step (one Redis script with BullMQ), so a failed add
   * records nothing. The record outlives the job: it lasts `ttlMs` whatever became of the job.
   */
  deduplication?: { id: string; ttlMs: number }
}

/**
 * The deduplication ids of a queue (the ones `EnqueueOptions.deduplication` records), for a
 * caller that must record several ids before one enqueue.
 */
export interface DeduplicationIds {
  /** Records each id not recorded in the last `ttlMs`; resolves with the ids it recorded. */
  claim(ids: string[], ttlMs: number): Promise<string[]>
  /** Forgets ids, so that they count as never seen. */
  release(ids: string[]): Promise<void>
}

/** A job that ran out of attempts, as `Queue.failed()` lists it. */
export interface FailedJob {
  id: string
  name: string
  payload: unknown
  error: string
  attempts: number
  failedAt: Date
}

/** A running worker, from `Queue.work`. */
export interface QueueWorker {
  /** Stops taking jobs and waits for the running ones to finish. */
  close(): Promise<void>
}

/** Options of `Queue.work`. */
export interface WorkOptions {
  concurrency?: number
}

/**
 * Background jobs. Payloads are plain JSON. In-process by default; BullMQ on Redis when
 * `REDIS_URL` is set, where producers (web instances) and workers (`kilnjs queue:work`) are
 * separate processes.
 */
export interface Queue {
  /**
   * Where jobs live: `memory` (this process; its own workers run them) or `bullmq` (Redis;
   * any process's workers, e.g. `kilnjs queue:work`, run them).
   */
  readonly kind?: 'memory' | 'bullmq'
  /**
   * Adds a job. Resolves once the job is stored (in Redis for BullMQ); rejects when it cannot
   * be, e.g. Redis is unreachable. With a `jobId` already known, nothing is added.
   */
  enqueue(name: string, payload: unknown, options?: EnqueueOptions): Promise<{ id: string }>
  /** The ids `deduplication` records, where the queue keeps them. */
  readonly deduplicationIds?: DeduplicationIds
  work(handlers: JobHandlers, options?: WorkOptions): QueueWorker
  /** Jobs that used up their attempts, newest first, with the last error. */
  failed(limit?: number): Promise<FailedJob[]>
  /**
   * Waits until no job is waiting, delayed for a retry or running (tests, shutdown). Only a
   * queue with a worker in this process waits; without one the jobs are safe where they are.
   */
  drain(): Promise<void>
  /** Stops this process's workers after their running jobs finish, then closes the queue. */
  close(): Promise<void>
}

/** How often a failed job runs again, and how long it waits first. */
export interface RetryPolicy {
  /** Runs in all, the first included. */
  attempts: number
  /** Delay before the first retry; each later retry doubles it. */
  backoffMs: number
  /**
   * Times a job may be postponed (its handler threw an error with `postponeMs`: something it
   * needs is held elsewhere) without spending an attempt. Past that, a postponement counts as
   * an ordinary failure, so a job is never postponed forever.
   */
  postponements: number
}

export const defaultRetryPolicy: RetryPolicy = { attempts: 5, backoffMs: 1_000, postponements: 10 }

/** Thrown by a handler for a failure no retry can fix: the job fails at once. */
export class UnrecoverableJobError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'UnrecoverableJobError'
  }
}

/**
 * Thrown by a handler whose job cannot run yet because something it needs is held elsewhere
 * for up to `postponeMs`: the job runs again after that, without spending an attempt (at most
 * `RetryPolicy.postponements` times). Any error with a numeric `postponeMs` is treated alike.
 */
export class PostponeJobError extends Error {
  readonly postponeMs: number

  constructor(message: string, postponeMs: number, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'PostponeJobError'
    this.postponeMs = postponeMs
  }
}

/** How long a handler's error asks its job to wait without spending an attempt, if it does. */
export function postponement(error: unknown): number | undefined {
  const delay = (error as { postponeMs?: unknown } | null)?.postponeMs
  return typeof delay === 'number' && delay >= 0 ? delay : undefined
}

/** The delay before retry `attempt` under `policy`: `backoffMs`, doubled for each later retry. */
export function backoffDelay(policy: Pick<RetryPolicy, 'backoffMs'>, attempt: number): number {
  return backoffDelayMs(attempt, { baseMs: policy.backoffMs })
}

/** The payload as a JSON round trip gives it back; `undefined` becomes `null`, as on Redis. */
export function toPlainJson(payload: unknown): unknown {
  const json = JSON.stringify(payload)
  return json === undefined ? null : JSON.parse(json)
}

/**
 * True when a JSON round trip would give `value` back unchanged (strings, finite numbers,
 * booleans, null, arrays and plain objects of those): such a payload needs no copy before a
 * queue serializes it. The check is cheaper than the round trip it saves, on every message.
 */
export function isPlainJson(value: unknown, depth = 0): boolean {
  if (depth > 32) return false
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true
    case 'number':
      return Number.isFinite(value)
    case 'object': {
      if (value === null) return true
      if (Array.isArray(value)) return value.every((item) => isPlainJson(item, depth + 1))
      const proto = Object.getPrototypeOf(value)
      if (proto !== Object.prototype && proto !== null) return false
      for (const key in value) {
        if (!isPlainJson((value as Record<string, unknown>)[key], depth + 1)) return false
      }
      return true
    }
    default:
      return false
  }
}
