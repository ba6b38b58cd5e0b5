import { randomUUID } from 'node:crypto'
import { isKilnError } from '../../core/errors.ts'
import type { TrustProxy } from '../../core/http/client-ip.ts'
import type { Logger } from '../../core/logger.ts'
import { MemoryPubSub, type PubSub } from '../../core/pubsub.ts'
import type { Redis } from '../../core/redis.ts'
import type { Database } from '../../db/database.ts'
import { bearerCredential } from '../auth/api-key-auth.ts'
import type { ApiKeyProvider } from '../provider/api-key-provider.ts'
import type { ChangeEvent } from './changes.ts'
import { type ChangeFeed, createChangeFeed } from './feed.ts'
import { MemoryStreamCounter, RedisStreamCounter, type StreamCounter } from './limits.ts'
import { DEFAULT_WINDOW, MemoryChangeLog, type RetainedWindow } from './log.ts'
import { listenForOutsideWrites } from './outside-writes.ts'
import { RedisChangeLog } from './redis-log.ts'
import { type EndReason, EventStream, type StreamMessage } from './stream.ts'

/** Options of `createRealtime`. */
export interface RealtimeOptions {
  /**
   * The shared state (`createSharedState`): with Redis, ids, the retained window and the stream
   * counts live in Redis and changes reach every instance; without it, this process alone.
   */
  shared?: { pubsub: PubSub; client: Redis | undefined } | undefined
  /** Each stream's key is verified again at every heartbeat: a revoked or expired one ends it. */
  apiKeys?: ApiKeyProvider | undefined
  /** How much of each resource's feed `Last-Event-ID` may resume from (1,000 events, 5 min). */
  window?: Partial<RetainedWindow> | undefined
  /** Between heartbeats (comment lines) and key checks. Default 15 s. */
  heartbeatMs?: number | undefined
  /** Unsent bytes a stream may hold for a client that does not read. Default 256 KiB. */
  bufferBytes?: number | undefined
  /** Changes a stream may have waiting for their policy read before it counts as slow. Default 256. */
  maxPending?: number | undefined
  /** Streams open at once per API key (default 10) and per client address (default 50). */
  maxStreamsPerKey?: number | undefined
  maxStreamsPerIp?: number | undefined
  /** Which proxies to believe for the client's address (as the rate limiters). Default none. */
  trustProxy?: TrustProxy | undefined
  logger?: Logger | undefined
  /** Redis key prefix. Default `kiln:realtime:`. */
  prefix?: string | undefined
  /**
   * Hear the writes made outside kiln (psql, another service): the database whose tables carry
   * the realtime trigger (`kilnjs make:realtime-trigger`). kiln LISTENs on it (on its direct URL
   * behind a transaction pooler) and publishes each write the trigger tells, once across
   * instances; kiln's own writes to those tables are then told by the trigger alone.
   */
  outsideWrites?: Database | undefined
}

/** What opening a stream needs: the resource, the request, and how a change reads for it. */
export interface StreamRequest {
  resource: string
  request: Request
  /** The API key (or other caller) the stream's limit per key counts against. */
  caller: { id?: string | number | undefined } | undefined
  /** The client's address under the given proxy trust (`resourceCall`'s `client`). */
  client: (trustProxy: TrustProxy) => string
  /** The event a change is for this caller, or undefined when it is not theirs to see. */
  view: (event: ChangeEvent) => Promise<StreamMessage | undefined>
}

/** What `/health` and the benchmark read. */
export interface RealtimeStatus {
  kind: 'memory' | 'redis'
  streams: number
  window: RetainedWindow
  /** The LISTEN for writes made outside kiln: `off` without `outsideWrites`. */
  outsideWrites: 'live' | 'down' | 'off'
}

/** The realtime core: the change feed, and the event streams built on it. */
export interface Realtime {
  feed: ChangeFeed
  /** What the resource operations call after each committed write (`feed.publish`). */
  publish: ChangeFeed['publish']
  /** Opens an event stream: a 200 `text/event-stream` response, or 429 past the limits. */
  stream(request: StreamRequest): Promise<Response>
  status(): RealtimeStatus
  /** Ends every stream (`end` event, `{ reason: 'shutdown' }`) and stops listening. */
  close(): Promise<void>
}

/**
 * The realtime core, one per app: give it to `resourceOperations` (and the MCP subscriptions)
 * so every write publishes and every stream reads the same feed.
 * @example
 * ```ts
 * const realtime = createRealtime({ shared, apiKeys, logger })
 * ```
 */
export function createRealtime(options: RealtimeOptions = {}): Realtime {
  const window = { ...DEFAULT_WINDOW, ...options.window }
  const heartbeatMs = options.heartbeatMs ?? 15_000
  const quota = { perKey: options.maxStreamsPerKey ?? 10, perIp: options.maxStreamsPerIp ?? 50 }
  const prefix = options.prefix ?? 'kiln:realtime:'
  const redis = options.shared?.client
  const pubsub = options.shared?.pubsub ?? new MemoryPubSub()
  const log = redis ? new RedisChangeLog(redis, window, prefix) : new MemoryChangeLog(window)
  const counter: StreamCounter = redis
    ? new RedisStreamCounter(redis, quota, prefix, heartbeatMs * 3)
    : new MemoryStreamCounter(quota)
  const feed = createChangeFeed(log, pubsub, options.logger)
  const outside =
    options.outsideWrites &&
    listenForOutsideWrites(options.outsideWrites, {
      publish: feed.publishClaimed,
      logger: options.logger,
    })
  const open = new Set<EventStream>()
  const settings = { ...options, heartbeatMs, bufferBytes: options.bufferBytes ?? 256 * 1024 }
  return {
    feed,
    // A write the trigger tells is not published twice.
    publish: (changes) =>
      feed.publish(outside ? changes.filter((change) => !outside.captures(change.table)) : changes),
    stream: (request) => openStream(request, { feed, counter, open, ...settings }),
    status: () => ({
      kind: redis ? 'redis' : 'memory',
      streams: open.size,
      window,
      outsideWrites: outside ? (outside.listening() ? 'live' : 'down') : 'off',
    }),
    async close() {
      for (const stream of [...open]) stream.end('shutdown')
      await outside?.close()
      await feed.close()
      if (!options.shared) await pubsub.close()
    },
  }
}

interface StreamSettings extends RealtimeOptions {
  feed: ChangeFeed
  counter: StreamCounter
  open: Set<EventStream>
  heartbeatMs: number
  bufferBytes: number
}

async function openStream(request: StreamRequest, settings: StreamSettings): Promise<Response> {
  const { feed, counter, open } = settings
  const ip = request.client(settings.trustProxy ?? false)
  const lease = await counter.acquire(randomUUID(), request.caller?.id?.toString(), ip)
  const cleanups: (() => unknown)[] = [() => lease.release().catch(() => {})]
  const stream = new EventStream(settings.bufferBytes, () => {
    open.delete(stream)
    for (const cleanup of cleanups) cleanup()
  })
  open.add(stream)
  try {
    const delivery = deliverer(stream, request, settings)
    const after = lastEventId(request.request)
    const subscription = await feed.subscribe(request.resource, delivery.tell, { after })
    delivery.live()
    cleanups.push(() => subscription.close())
  } catch (error) {
    stream.end('error')
    throw error
  }
  const timer = setInterval(() => heartbeat(stream, request, settings, lease), settings.heartbeatMs)
  timer.unref()
  cleanups.push(() => clearInterval(timer))
  const hangUp = () => stream.end('error')
  request.request.signal.addEventListener('abort', hangUp, { once: true })
  cleanups.push(() => request.request.signal.removeEventListener('abort', hangUp))
  stream.comment('open')
  return new Response(stream.body, {
    headers: {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'private, no-cache, no-transform',
      'X-Accel-Buffering': 'no',
    },
  })
}

/**
 * Each change, read under the caller's policy, in feed order; `reread` where some were lost.
 * The live changes waiting for their read are bounded by `maxPending`; a resume's replay is
 * not counted (the window bounds it), so a resume is never taken for a slow consumer.
 */
function deliverer(stream: EventStream, request: StreamRequest, settings: StreamSettings) {
  const maxPending = settings.maxPending ?? 256
  let pending = 0
  let replaying = true
  let chain = Promise.resolve()
  const tell = (event: ChangeEvent | 'reread') => {
    if (stream.ended) return
    const counted = !replaying
    if (counted && ++pending > maxPending) return stream.end('slow_consumer')
    chain = chain.then(async () => {
      if (counted) pending--
      if (stream.ended) return
      if (event === 'reread') return stream.send(REREAD)
      try {
        const message = await request.view(event)
        if (message) stream.send(message.id === undefined ? { ...message, id: event.seq } : message)
      } catch (error) {
        settings.logger?.warn({ err: error, resource: request.resource }, 'realtime: read failed')
        stream.send(REREAD)
      }
    })
  }
  const live = () => {
    replaying = false
  }
  return { tell, live }
}

/** The event that tells a client its copy may be stale: read the resource again. */
const REREAD: StreamMessage = { event: 'reread', data: { reason: 'events_lost' } }

async function heartbeat(
  stream: EventStream,
  request: StreamRequest,
  settings: StreamSettings,
  lease: { renew(): Promise<void> },
): Promise<void> {
  stream.comment('heartbeat')
  await lease.renew().catch(() => {})
  if (!settings.apiKeys || stream.ended) return
  try {
    await settings.apiKeys.verifyKey(
      bearerCredential(request.request.headers.get('authorization') ?? undefined),
    )
  } catch (error) {
    // A key refused (revoked, expired) ends the stream; a key store that is down does not.
    if (isKilnError(error) && error.status === 401) stream.end('key_rejected' satisfies EndReason)
  }
}

/** `Last-Event-ID`: a resume from that event; anything but a whole number is a stale copy. */
function lastEventId(request: Request): number | undefined {
  const raw = request.headers.get('last-event-id')
  if (raw === null || raw.trim() === '') return undefined
  return /^\d{1,15}$/.test(raw.trim()) ? Number(raw.trim()) : -1
}
