import {
  type AuthInfo,
  createMcpHandler,
  type McpServer,
  type ServerEventBus,
} from '@modelcontextprotocol/server'
import type { Logger } from '../../core/index.ts'
import type { McpCaller } from '../data/access.ts'
import type { ModelWatch } from '../data/watch.ts'
import { type ChangeSource, watchModels } from './watcher.ts'

/** What both eras' subscriptions share: the read rule, the feed and the open streams. */
export interface SubscriptionContext {
  watch: ModelWatch
  feed: ChangeSource
  logger?: Logger | undefined
  keepAliveMs?: number | undefined
  /** Closes the stream at shutdown; returns the removal, called when it ends on its own. */
  track(close: () => Promise<void> | void): () => void
}

/** The body of a 2026-07-28 `subscriptions/listen` request. */
interface ListenBody {
  id: string | number
  params?: { notifications?: { resourceSubscriptions?: unknown } }
}

export function isListen(body: unknown): body is ListenBody {
  return (body as { method?: unknown } | null)?.method === 'subscriptions/listen'
}

/** Declares `resources.subscribe` on a server that serves resources (the data tools' do). */
export function declaringSubscribe(server: McpServer): McpServer {
  const resources = server.server.getCapabilities().resources
  if (resources)
    server.server.registerCapabilities({ resources: { ...resources, subscribe: true } })
  return server
}

/**
 * Answers a 2026-07-28 `subscriptions/listen`: the filter's `resourceSubscriptions` narrowed to
 * the model and record resources the caller may read (the acknowledgement lists only those), then the
 * SDK's own listen stream, fed from kiln's change feed through a bus of this request alone, so
 * that each stream checks changes against its own caller. The stream ends gracefully when the
 * token expires.
 */
export async function serveListen(
  context: SubscriptionContext,
  request: Request,
  body: ListenBody,
  authInfo: AuthInfo,
  caller: McpCaller,
  createServer: () => McpServer,
): Promise<Response> {
  const notifications = body.params?.notifications
  const requested = notifications?.resourceSubscriptions
  const uris = Array.isArray(requested)
    ? await context.watch.subscribable(
        caller,
        requested.filter((uri): uri is string => typeof uri === 'string'),
      )
    : []
  if (notifications && Array.isArray(requested)) {
    // Left out rather than refused: an out-of-reach URI answers as an unknown one.
    notifications.resourceSubscriptions = uris
    if (uris.length === 0) delete notifications.resourceSubscriptions
  }
  // The feed is listened to before the acknowledgement goes out, so that a write the client
  // makes once acknowledged is heard; what arrives before the stream's listener is held.
  let deliver: ((uri: string) => void) | undefined
  const early = new Set<string>()
  const notify = (uri: string) => (deliver ? deliver(uri) : early.add(uri))
  const stop = uris.length > 0 ? await watchModels({ ...context, caller, uris, notify }) : undefined
  let handler: ReturnType<typeof createMcpHandler> | undefined
  let subscribed = false
  const bus: ServerEventBus = {
    publish() {},
    subscribe(listener) {
      subscribed = true
      const untrack = context.track(() => handler?.close())
      const expires = authInfo.expiresAt
        ? setTimeout(() => void handler?.close(), authInfo.expiresAt * 1000 - Date.now())
        : undefined
      deliver = (uri) => listener({ kind: 'resource_updated', uri })
      for (const uri of early) deliver(uri)
      early.clear()
      return () => {
        deliver = undefined
        clearTimeout(expires)
        untrack()
        void stop?.()
      }
    },
  }
  handler = createMcpHandler(() => declaringSubscribe(createServer()), {
    legacy: 'reject',
    bus,
    ...(context.keepAliveMs !== undefined ? { keepAliveMs: context.keepAliveMs } : {}),
  })
  try {
    const response = await handler.fetch(request, { parsedBody: body, authInfo })
    // Refused, or acknowledged with nothing to listen for: the stream never listened.
    if (!subscribed) await stop?.()
    return response
  } catch (error) {
    await stop?.()
    throw error
  }
}
