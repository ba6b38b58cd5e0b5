import { type KeyValueStore, type Logger, MemoryKeyValueStore } from '../../core/index.ts'
import type { ModelWatch } from '../data/watch.ts'
import type { SubscriptionContext } from './listen.ts'
import type { ChangeSource } from './watcher.ts'

/** Options of `mcpSubscriptions`. */
export interface McpSubscriptionsOptions {
  /** What a subscription may read: the data tools' `tools.watch`. */
  watch: ModelWatch
  /** kiln's change feed, which every instance hears every write on. */
  feed: ChangeSource
  /**
   * Where 2025-era sessions keep their subscriptions: the app's `shared.kv`, so that a stream
   * on one instance hears a subscription made on another. Default: this process's memory.
   */
  store?: KeyValueStore | undefined
  logger?: Logger | undefined
  /** The interval of the streams' keep-alive comments. Default 15 s. */
  keepAliveMs?: number | undefined
}

/** The subscriptions of `/mcp`, to pass to `mcpEndpoint({ subscriptions })`. */
export interface McpSubscriptions {
  /** Subscription streams open on this instance (both eras). */
  readonly openCount: number
  /** Ends every open stream (the 2026-07-28 ones gracefully): call it at shutdown. */
  close(): Promise<void>
}

/** What the endpoint reads off a `McpSubscriptions`; not part of its public face. */
export interface SubscriptionsInternals {
  context: SubscriptionContext
  store: KeyValueStore
}

const internals = new WeakMap<McpSubscriptions, SubscriptionsInternals>()

export function internalsOf(subscriptions: McpSubscriptions): SubscriptionsInternals {
  const found = internals.get(subscriptions)
  if (!found) throw new TypeError('mcpEndpoint: `subscriptions` must come from mcpSubscriptions()')
  return found
}

/**
 * MCP resource subscriptions over kiln's change feed, under the read rule of `crud_list`: a
 * caller subscribes to the model resources (`kiln://models/{model}`) it may list, and is told
 * `notifications/resources/updated` when a record in its view changes. 2026-07-28 clients listen
 * with `subscriptions/listen`; 2025-era clients `resources/subscribe` within their session and
 * hear on its `GET` stream (docs/realtime.md).
 * @example
 * ```ts
 * const realtime = createRealtime({ shared, apiKeys, logger })
 * const subscriptions = mcpSubscriptions({ watch: tools.watch, feed: realtime.feed, store: shared.kv })
 * // mcpEndpoint({ validator, resourceMetadataUrl, subscriptions, createServer })
 * ```
 */
export function mcpSubscriptions(options: McpSubscriptionsOptions): McpSubscriptions {
  if (!options.watch || !options.feed) {
    throw new TypeError('mcpSubscriptions: `watch` (tools.watch) and `feed` are required')
  }
  const open = new Set<() => Promise<void> | void>()
  const context: SubscriptionContext = {
    watch: options.watch,
    feed: options.feed,
    logger: options.logger,
    keepAliveMs: options.keepAliveMs,
    track(close) {
      open.add(close)
      return () => open.delete(close)
    },
  }
  const subscriptions: McpSubscriptions = {
    get openCount() {
      return open.size
    },
    async close() {
      await Promise.allSettled([...open].map((close) => close()))
      open.clear()
    },
  }
  internals.set(subscriptions, { context, store: options.store ?? new MemoryKeyValueStore() })
  return subscriptions
}
