import type { Change, ChangeEvent } from './changes.ts'

/** How much of each resource's feed is kept for `Last-Event-ID` to resume from. */
export interface RetainedWindow {
  /** Most events kept per resource (default 1,000). */
  size: number
  /** Events older than this are not replayed (default 5 minutes). */
  maxAgeMs: number
}

/** The window kept by default: 1,000 events per resource, none older than 5 minutes. */
export const DEFAULT_WINDOW: RetainedWindow = { size: 1_000, maxAgeMs: 5 * 60_000 }

/** What a resume asked of the window: the events after the given id, or `gap` past its reach. */
export type Replay = ChangeEvent[] | 'gap'

/**
 * Where each resource's changes are numbered and retained: the one source of `seq`, shared by
 * every instance (memory in one process, Redis with `REDIS_URL`).
 */
export interface ChangeLog {
  /**
   * Numbers the changes of one resource in order, keeps them, and answers them numbered. With a
   * `claim`, only the first instance to append under it does (the others get none back); in one
   * process every claim is the first.
   */
  append(resource: string, changes: Change[], claim?: string): Promise<ChangeEvent[]>
  /** The last `seq` given for the resource (0 before its first change). */
  head(resource: string): Promise<number>
  /**
   * The retained events after `after`, in order; `gap` when some of them are no longer kept
   * (pushed out by size or age) or `after` is not an id this feed gave.
   */
  since(resource: string, after: number): Promise<Replay>
}

/** The window's rule over what one resource's log holds, the same for memory and Redis. */
export function replayOf(
  retained: ChangeEvent[],
  head: number,
  after: number,
  window: RetainedWindow,
  now: number,
): Replay {
  if (after === head) return []
  if (after > head || after < 0) return 'gap'
  const fresh = retained.filter((event) => now - event.at <= window.maxAgeMs)
  const next = fresh.findIndex((event) => event.seq > after)
  if (next < 0 || fresh[next]!.seq !== after + 1) return 'gap'
  return fresh.slice(next)
}

/** The log in this process's memory: for one instance (no `REDIS_URL`). */
export class MemoryChangeLog implements ChangeLog {
  readonly #window: RetainedWindow
  readonly #logs = new Map<string, { head: number; events: ChangeEvent[] }>()
  readonly #now: () => number

  constructor(window: RetainedWindow, now: () => number = Date.now) {
    this.#window = window
    this.#now = now
  }

  async append(resource: string, changes: Change[]): Promise<ChangeEvent[]> {
    const log = this.#log(resource)
    const at = this.#now()
    const numbered = changes.map((change) => ({ ...change, seq: ++log.head, at }))
    log.events.push(...numbered)
    if (log.events.length > this.#window.size) {
      log.events.splice(0, log.events.length - this.#window.size)
    }
    return numbered
  }

  async head(resource: string): Promise<number> {
    return this.#log(resource).head
  }

  async since(resource: string, after: number): Promise<Replay> {
    const { head, events } = this.#log(resource)
    return replayOf(events, head, after, this.#window, this.#now())
  }

  #log(resource: string) {
    let log = this.#logs.get(resource)
    if (!log) {
      log = { head: 0, events: [] }
      this.#logs.set(resource, log)
    }
    return log
  }
}
