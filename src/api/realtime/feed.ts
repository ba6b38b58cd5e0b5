import type { Logger } from '../../core/logger.ts'
import type { PubSub } from '../../core/pubsub.ts'
import { type Change, type ChangeEvent, type ChangeInput, changeOf, parseEvent } from './changes.ts'
import type { ChangeLog } from './log.ts'

/**
 * Told each event of a resource in `seq` order, or `reread` where events were lost (a resume
 * past the window, a catch-up that failed): the client must read the resource again.
 */
export type ChangeListener = (event: ChangeEvent | 'reread') => void

/** A listener's place on the feed; `close()` stops it. */
export interface FeedSubscription {
  close(): Promise<void>
}

/**
 * The change feed: what kiln's writes publish after their commit, numbered per resource, kept
 * in the retained window and told to every instance's subscribers in order.
 */
export interface ChangeFeed {
  /** Publishes committed changes. Never rejects: a feed that fails is logged, not the write's. */
  publish(changes: ChangeInput[]): Promise<void>
  /**
   * Listens to a resource's events. With `after` (a `Last-Event-ID`), first replays the retained
   * events after it, or tells `reread` when the window no longer reaches back to it.
   */
  subscribe(
    resource: string,
    listener: ChangeListener,
    options?: { after?: number | undefined },
  ): Promise<FeedSubscription>
  close(): Promise<void>
}

/** Publishing heard by every instance: only the first to claim it numbers and sends it. */
export interface ClaimedPublish {
  publishClaimed(changes: ChangeInput[], claim: string): Promise<void>
}

const channelOf = (resource: string) => `realtime:${resource}`

/** The feed over a log (numbering, window) and pub/sub (telling every instance). */
export function createChangeFeed(
  log: ChangeLog,
  pubsub: PubSub,
  logger?: Logger,
): ChangeFeed & ClaimedPublish {
  const channels = new Map<string, Promise<ResourceChannel>>()
  const channel = (resource: string) => {
    let open = channels.get(resource)
    if (!open) {
      open = ResourceChannel.open(resource, log, pubsub, logger)
      open.catch(() => channels.delete(resource))
      channels.set(resource, open)
    }
    return open
  }
  const publish = async (changes: ChangeInput[], claim?: string) => {
    const byResource = new Map<string, Change[]>()
    for (const change of changes.map(changeOf)) {
      byResource.set(change.resource, [...(byResource.get(change.resource) ?? []), change])
    }
    for (const [resource, group] of byResource) {
      try {
        for (const event of await log.append(resource, group, claim)) {
          await pubsub.publish(channelOf(resource), JSON.stringify(event))
        }
      } catch (error) {
        // Subscribers find the missing ids at the next event and catch up from the log.
        logger?.error({ err: error, resource }, 'realtime: a change could not be published')
      }
    }
  }
  return {
    publish: (changes) => publish(changes),
    publishClaimed: (changes, claim) => publish(changes, claim),
    async subscribe(resource, listener, options = {}) {
      const open = await channel(resource)
      return open.add(listener, options.after)
    },
    async close() {
      const open = await Promise.allSettled(channels.values())
      channels.clear()
      for (const result of open) if (result.status === 'fulfilled') await result.value.close()
    },
  }
}

/** One resource's events on this instance: one pub/sub subscription, fanned out in order. */
class ResourceChannel {
  readonly #listeners = new Set<{ tell: ChangeListener; last: number }>()
  #last = 0
  #chain: Promise<void> = Promise.resolve()
  #unsubscribe: () => Promise<void> = async () => {}

  private constructor(
    readonly resource: string,
    readonly log: ChangeLog,
    readonly logger: Logger | undefined,
  ) {}

  static async open(resource: string, log: ChangeLog, pubsub: PubSub, logger?: Logger) {
    const channel = new ResourceChannel(resource, log, logger)
    channel.#unsubscribe = await pubsub.subscribe(channelOf(resource), (text) => {
      const event = parseEvent(text)
      if (event) channel.#run(() => channel.#receive(event))
    })
    // Numbered from the log's head once subscribed: an event after that arrives, or is caught up.
    try {
      channel.#last = await log.head(resource)
    } catch (error) {
      await channel.#unsubscribe()
      throw error
    }
    return channel
  }

  add(tell: ChangeListener, after: number | undefined): Promise<FeedSubscription> {
    const listener = { tell, last: this.#last }
    const added = new Promise<FeedSubscription>((resolve) => {
      this.#run(async () => {
        listener.last = this.#last
        if (after !== undefined) await this.#replay(listener, after)
        this.#listeners.add(listener)
        resolve({ close: async () => void this.#listeners.delete(listener) })
      })
    })
    return added
  }

  async close(): Promise<void> {
    this.#listeners.clear()
    await this.#unsubscribe()
  }

  async #replay(listener: { tell: ChangeListener; last: number }, after: number) {
    const replay = await this.log.since(this.resource, after).catch(() => 'gap' as const)
    if (replay === 'gap') return safely(listener.tell, 'reread')
    for (const event of replay) safely(listener.tell, event)
    listener.last = Math.max(this.#last, replay.at(-1)?.seq ?? after)
  }

  /** In order: an event past the next id first brings the missing ones from the log. */
  async #receive(event: ChangeEvent) {
    if (event.seq <= this.#last) return
    if (event.seq === this.#last + 1) return this.#deliver(event)
    const missed = await this.log.since(this.resource, this.#last).catch(() => 'gap' as const)
    if (missed === 'gap') {
      this.logger?.warn(
        { resource: this.resource },
        'realtime: events lost; streams told to re-read',
      )
      for (const listener of this.#listeners) safely(listener.tell, 'reread')
      this.#last = event.seq
      for (const listener of this.#listeners) listener.last = event.seq
      return
    }
    for (const each of missed) this.#deliver(each)
  }

  #deliver(event: ChangeEvent) {
    this.#last = event.seq
    for (const listener of this.#listeners) {
      if (event.seq <= listener.last) continue
      listener.last = event.seq
      safely(listener.tell, event)
    }
  }

  #run(step: () => unknown) {
    this.#chain = this.#chain
      .then(async () => void (await step()))
      .catch((error) => {
        this.logger?.error({ err: error, resource: this.resource }, 'realtime: delivery failed')
      })
  }
}

/** A listener's failure is its own: it stops neither the others nor the feed. */
function safely(tell: ChangeListener, event: ChangeEvent | 'reread'): void {
  try {
    tell(event)
  } catch {
    // The listener reports its own errors.
  }
}
