import type { KeyValueStore } from '../../core/index.ts'
import { keyDigest } from '../../core/kv/key-digest.ts'
import type { McpCaller } from '../data/access.ts'
import type { SubscriptionContext } from './listen.ts'
import { watchModels } from './watcher.ts'

/** A 2025-era session's subscriptions live this long after their last `resources/subscribe`. */
const SUBSCRIPTION_TTL_MS = 24 * 60 * 60 * 1000

/** The body of a 2025-era `resources/subscribe` or `resources/unsubscribe`. */
interface SubscribeBody {
  method: 'resources/subscribe' | 'resources/unsubscribe'
  id?: string | number
  params?: { uri?: unknown }
}

export function isSubscribeCall(body: unknown): body is SubscribeBody {
  const method = (body as { method?: unknown } | null)?.method
  return method === 'resources/subscribe' || method === 'resources/unsubscribe'
}

/**
 * One key per subscribed URI of a session, bound to the caller (client, user, tenant): another
 * token presenting the session id reads none of them. A key per URI keeps subscribe and
 * unsubscribe single writes, with no read-modify-write across instances.
 */
function subscriptionKey(caller: McpCaller, session: string, uri: string): string {
  const whose = [caller.clientId, caller.userId, caller.tenantId, session, uri]
  return `mcp:subscription:${keyDigest(JSON.stringify(whose))}`
}

const rpc = (id: unknown, answer: { result: object } | { error: object }) =>
  Response.json({ jsonrpc: '2.0', id: id ?? null, ...answer })

/**
 * Answers `resources/subscribe` and `resources/unsubscribe` of a 2025-era session: a model
 * resource the caller may read is kept in the store (any instance's stream reads it); any other
 * URI is "Resource not found" (-32602, the URI in `data`), as `resources/read` answers it.
 */
export async function answerSubscribeCall(
  context: SubscriptionContext,
  store: KeyValueStore,
  body: SubscribeBody,
  caller: McpCaller,
  session: string | undefined,
): Promise<Response> {
  const uri = body.params?.uri
  if (typeof uri !== 'string') {
    return rpc(body.id, { error: { code: -32602, message: 'Invalid params: uri is required' } })
  }
  if (!session) {
    const message = `${body.method} needs the session initialize gave (Mcp-Session-Id)`
    return rpc(body.id, { error: { code: -32600, message } })
  }
  const key = subscriptionKey(caller, session, uri)
  if (body.method === 'resources/unsubscribe') {
    await store.delete(key)
    return rpc(body.id, { result: {} })
  }
  if ((await context.watch.subscribable(caller, [uri])).length === 0) {
    return rpc(body.id, { error: { code: -32602, message: 'Resource not found', data: { uri } } })
  }
  await store.set(key, '1', { ttlMs: SUBSCRIPTION_TTL_MS })
  return rpc(body.id, { result: {} })
}

/**
 * The session's `GET` stream (2025 Streamable HTTP): `notifications/resources/updated` for each
 * subscribed URI whose model changed in the caller's view. It watches every model the caller
 * may read and asks the store whether the session subscribed to it, so a subscription made on
 * another instance after the stream opened is heard. Keep-alive comments hold it open; it ends
 * when the token expires, or at shutdown.
 */
export async function serveSessionStream(
  context: SubscriptionContext,
  store: KeyValueStore,
  caller: McpCaller,
  session: string,
  expiresAt: number | undefined,
): Promise<Response> {
  const encoder = new TextEncoder()
  let write: ((frame: string) => void) | undefined
  const notification = (uri: string) => ({
    jsonrpc: '2.0',
    method: 'notifications/resources/updated',
    params: { uri },
  })
  // Listening starts before the stream is answered: a write made once it is open is heard.
  const stop = await watchModels({
    ...context,
    caller,
    uris: context.watch.readable(caller),
    subscribed: async (uri) =>
      (await store.get(subscriptionKey(caller, session, uri))) !== undefined,
    notify: (uri) => write?.(`event: message\ndata: ${JSON.stringify(notification(uri))}\n\n`),
  })
  let end: () => void = () => {}
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      let open = true
      write = (frame: string) => {
        if (open) controller.enqueue(encoder.encode(frame))
      }
      const keepAlive = setInterval(() => write?.(': keepalive\n\n'), context.keepAliveMs ?? 15_000)
      const expires = expiresAt ? setTimeout(() => end(), expiresAt * 1000 - Date.now()) : undefined
      const untrack = context.track(() => end())
      end = () => {
        if (!open) return
        open = false
        clearInterval(keepAlive)
        clearTimeout(expires)
        untrack()
        void stop()
        controller.close()
      }
    },
    cancel() {
      end()
    },
  })
  return new Response(body, {
    headers: {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
    },
  })
}
