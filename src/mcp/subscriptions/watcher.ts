import type { Logger } from '../../core/index.ts'
import type { McpCaller } from '../data/access.ts'
import type { ModelWatch } from '../data/watch.ts'

/** What the watcher hears of one resource's feed: a change, or `reread` where events were lost. */
export type FeedEvent = { kind: string; id: string | number } | 'reread'

/** The part of kiln's change feed (`kilnjs/api`) a subscription listens to. */
export interface ChangeSource {
  subscribe(
    resource: string,
    listener: (event: FeedEvent) => void,
  ): Promise<{ close(): Promise<void> }>
}

/** Options of `watchModels`. */
export interface WatchOptions {
  feed: ChangeSource
  watch: ModelWatch
  caller: McpCaller | undefined
  /** The model resources' URIs to watch (already narrowed to what the caller may read). */
  uris: readonly string[]
  /** Whether the URI is subscribed now (a 2025 session's set may change while it listens). */
  subscribed?: (uri: string) => boolean | Promise<boolean>
  /** Sends `notifications/resources/updated` for the URI. */
  notify: (uri: string) => void
  logger?: Logger | undefined
}

/**
 * Events held per URI while a check runs; past it they collapse into one `reread`, so a burst of
 * writes never grows a slow subscriber's memory.
 */
const MAX_PENDING = 1_000

/** Ids remembered per URI for their hard deletes, as the REST streams remember theirs. */
const MAX_SEEN = 1_000

/**
 * Listens to the feed of each watched model and notifies a URI when a change is one the caller
 * could read: a created, updated or restored record in its view now (the list's own query,
 * `ModelWatch.sees`); a deleted one that was (`ModelWatch.sawDeleted`: from the trash, or a
 * record this stream was told of, or any when nothing narrows the caller's rows); lost events
 * (`reread`). Events of one URI are checked one batch at a time, and one notification answers a
 * batch. Returns the stop.
 */
export async function watchModels(options: WatchOptions): Promise<() => Promise<void>> {
  const { feed, watch, caller, notify, logger } = options
  const subscriptions: Array<{ close(): Promise<void> }> = []
  let stopped = false
  const stop = async () => {
    stopped = true
    await Promise.allSettled(subscriptions.splice(0).map((s) => s.close()))
  }
  try {
    for (const uri of options.uris) {
      const resource = watch.resourceOf(uri)
      if (!resource) continue
      // The ids this stream was told of, so that their hard deletes are told too.
      const seen = new Set<string>()
      const visible = async (event: FeedEvent) => {
        if (event === 'reread') return true
        const id = String(event.id)
        if (event.kind === 'deleted') {
          return watch.sawDeleted(caller, resource, event.id, seen.delete(id))
        }
        if (!(await watch.sees(caller, resource, event.id))) return false
        seen.add(id)
        if (seen.size > MAX_SEEN) seen.delete(seen.values().next().value!)
        return true
      }
      const queue = batched(async (events) => {
        if (stopped || !(await (options.subscribed?.(uri) ?? true))) return
        for (const event of events) {
          if (stopped) return
          if (await visible(event)) return notify(uri)
        }
      }, logger)
      subscriptions.push(await feed.subscribe(resource, queue))
    }
  } catch (error) {
    await stop()
    throw error
  }
  return stop
}

/** Runs `handle` on the events that arrived since its last run, one run at a time. */
function batched(
  handle: (events: FeedEvent[]) => Promise<void>,
  logger: Logger | undefined,
): (event: FeedEvent) => void {
  let pending: FeedEvent[] = []
  let running = false
  const drain = async () => {
    running = true
    while (pending.length > 0) {
      const events = pending
      pending = []
      try {
        await handle(events)
      } catch (error) {
        logger?.warn({ error: (error as Error).message }, 'mcp: a subscription check failed')
      }
    }
    running = false
  }
  return (event) => {
    pending.push(event)
    if (pending.length > MAX_PENDING) pending = ['reread']
    if (!running) void drain()
  }
}
