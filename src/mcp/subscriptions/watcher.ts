import type { Logger } from '../../core/index.ts'
import type { McpCaller } from '../data/access.ts'
import { recordUri } from '../data/resources.ts'
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
  /** The model and record resources' URIs to watch (already narrowed to what the caller may read). */
  uris: readonly string[]
  /**
   * Whether the URI is subscribed now (a 2025 session's set may change while it listens). With
   * it, the record resource of each change of a watched model is asked about too: a session may
   * subscribe to any record, after its stream opened.
   */
  subscribed?: (uri: string) => boolean | Promise<boolean>
  /** Sends `notifications/resources/updated` for the URI. */
  notify: (uri: string) => void
  logger?: Logger | undefined
}

/**
 * Events held per model while a check runs; past it they collapse into one `reread`, so a burst
 * of writes never grows a slow subscriber's memory.
 */
const MAX_PENDING = 1_000

/** Ids remembered per model for their leaving the view, as the REST streams remember theirs. */
const MAX_SEEN = 1_000

/**
 * Listens to the feed of each watched model and notifies a URI when a change is one the caller
 * could read, before or after: a created, updated or restored record in its view now (the
 * list's own query, `ModelWatch.sees`); one that left it (an update out of it, or a delete that
 * `ModelWatch.sawDeleted` says was seen) when the URI was told of it: a model resource of each
 * record it notified, a record resource of its record from the start (the subscription found it
 * in view); lost events (`reread`). A record resource hears its record's changes only. Events
 * of one model are checked one batch at a time, and one notification per URI answers a batch.
 * Returns the stop.
 */
export async function watchModels(options: WatchOptions): Promise<() => Promise<void>> {
  const subscriptions: Array<{ close(): Promise<void> }> = []
  let stopped = false
  const stop = async () => {
    stopped = true
    await Promise.allSettled(subscriptions.splice(0).map((s) => s.close()))
  }
  // The URIs by the model whose feed tells their changes.
  const byModel = new Map<string, { model?: string; records: Map<string, string> }>()
  for (const uri of options.uris) {
    const target = options.watch.targetOf(uri)
    if (!target) continue
    const watched = byModel.get(target.resource) ?? { records: new Map<string, string>() }
    if (target.id === undefined) watched.model = uri
    else watched.records.set(target.id, uri)
    byModel.set(target.resource, watched)
  }
  try {
    for (const [resource, watched] of byModel) {
      const check = modelCheck(options, resource, watched, () => stopped)
      subscriptions.push(await options.feed.subscribe(resource, batched(check, options.logger)))
    }
  } catch (error) {
    await stop()
    throw error
  }
  return stop
}

/** What a URI remembers of a record: whether it was told of it (in view when last looked). */
interface Told {
  has(id: string): boolean
  set(id: string, told: boolean): void
}

/** The check of one model's batches of events, for its model URI and its records' URIs. */
function modelCheck(
  options: WatchOptions,
  resource: string,
  watched: { model?: string | undefined; records: Map<string, string> },
  stopped: () => boolean,
): (events: FeedEvent[]) => Promise<void> {
  const { watch, caller, notify } = options
  const subscribed = async (uri: string) => (await options.subscribed?.(uri)) ?? true
  // A model URI was told of the records it notified; a record URI of its record until it left.
  const toldModel = told(new Set(), true)
  const toldRecords = told(new Set(), false)
  // A session's record subscriptions heard of so far, to notify when events were lost.
  const sessionRecords = new Set<string>()
  return async (events) => {
    const reads = new Map<string, Promise<boolean>>()
    const sees = (id: string | number) => {
      const key = String(id)
      if (!reads.has(key)) reads.set(key, watch.sees(caller, resource, id))
      return reads.get(key)!
    }
    const visible = async (event: FeedEvent, memory: Told) => {
      if (event === 'reread') return true
      const id = String(event.id)
      const was = memory.has(id)
      if (event.kind === 'deleted') {
        memory.set(id, false)
        return watch.sawDeleted(caller, resource, event.id, was)
      }
      const now = await sees(event.id)
      memory.set(id, now)
      return now || was
    }
    const notifyFirst = async (uri: string, of: FeedEvent[], memory: Told) => {
      for (const event of of) {
        if (stopped()) return
        if (await visible(event, memory)) return notify(uri)
      }
    }
    if (stopped()) return
    if (watched.model && (await subscribed(watched.model))) {
      await notifyFirst(watched.model, events, toldModel)
    }
    const reread = events.includes('reread')
    const ids = new Set(watched.records.keys())
    if (options.subscribed) {
      for (const event of events) if (event !== 'reread') ids.add(String(event.id))
      if (reread) for (const id of sessionRecords) ids.add(id)
    }
    for (const id of ids) {
      const uri = watched.records.get(id) ?? recordUri(resource, id)
      const of = reread
        ? ['reread' as const]
        : events.filter((e) => e !== 'reread' && String(e.id) === id)
      if (stopped() || of.length === 0 || !(await subscribed(uri))) continue
      if (options.subscribed) remember(sessionRecords, id)
      await notifyFirst(uri, of, toldRecords)
    }
  }
}

/**
 * A bounded memory of ids: `told(set, true)` holds the ids told of (a model URI's), and
 * `told(set, false)` the ids that left the view (a record URI's, told of its record at first).
 */
function told(ids: Set<string>, holdsTold: boolean): Told {
  return {
    has: (id) => ids.has(id) === holdsTold,
    set(id, told) {
      if (told === holdsTold) remember(ids, id)
      else ids.delete(id)
    },
  }
}

function remember(ids: Set<string>, id: string): void {
  ids.delete(id)
  ids.add(id)
  if (ids.size > MAX_SEEN) ids.delete(ids.values().next().value!)
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
