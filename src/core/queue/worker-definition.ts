import type { JobHandlers, Queue } from './queue.ts'

/**
 * What an app's worker module (`worker` in kiln.config.ts) resolves to: `kilnjs queue:work`
 * imports it, calls its default export and runs `queue.work(handlers)` until SIGTERM.
 */
export interface WorkerDefinition {
  queue: Queue
  handlers: JobHandlers
  concurrency?: number
  /** Closes what the module opened (database, Redis), after the worker has stopped. */
  close(): Promise<void>
}

/** The module `kilnjs queue:work` imports: its default export builds the worker. */
export type WorkerModule = { default: () => Promise<WorkerDefinition> }
