import type { JobHandlers } from 'kilnjs/core'
import type { DemoContext } from './context.ts'
import { messagingJobs } from './features/messaging.ts'

/** A capability's background jobs. */
export type JobSource = (ctx: DemoContext) => JobHandlers

/** Every job the demo runs: in the web process without REDIS_URL, in `kilnjs queue:work` with it. */
export const jobSources: JobSource[] = [messagingJobs]

export function demoJobHandlers(ctx: DemoContext): JobHandlers {
  return Object.assign({}, ...jobSources.map((source) => source(ctx)))
}
