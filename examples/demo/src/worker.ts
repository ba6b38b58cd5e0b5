import type { WorkerDefinition } from 'kilnjs/core'
import { createDemoContext } from './context.ts'
import { demoJobHandlers } from './jobs.ts'

/** The demo's worker for `npx kilnjs queue:work` (with REDIS_URL and DATABASE_URL set). */
export default async function createWorker(): Promise<WorkerDefinition> {
  const ctx = await createDemoContext()
  return {
    queue: ctx.shared.queue,
    handlers: demoJobHandlers(ctx),
    concurrency: Number(process.env.WORKER_CONCURRENCY ?? 4),
    close: () => ctx.close(),
  }
}
