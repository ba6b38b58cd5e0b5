export { BullMqQueue, type BullMqQueueOptions, decodeJobId, encodeJobId } from './bullmq-queue.ts'
export { MemoryQueue, type MemoryQueueOptions } from './memory-queue.ts'
export {
  backoffDelay,
  type DeduplicationIds,
  defaultRetryPolicy,
  type EnqueueOptions,
  type FailedJob,
  isPlainJson,
  type JobContext,
  type JobHandler,
  type JobHandlers,
  PostponeJobError,
  type Queue,
  type QueueWorker,
  type RetryPolicy,
  toPlainJson,
  UnrecoverableJobError,
  type WorkOptions,
} from './queue.ts'
export type { WorkerDefinition, WorkerModule } from './worker-definition.ts'
