/**
 * Server→client requests (an `elicitation/create`, say) on the stateless 2025-era endpoint.
 *
 * A 2025-era tool call that asks the client something answers as an SSE stream: the request
 * goes out on that stream, and the client POSTs its JSON-RPC response as a new request, which
 * may reach any instance. The relay makes that work: the outgoing request gets an id unique
 * across calls and instances, the waiting call is recorded in the shared store (bound to the
 * caller) and subscribes to a channel of its own; the answer's POST, on whichever instance,
 * checks the caller and publishes the answer there, once; the waiting instance hands it to the
 * call's server under the id the server gave it.
 *
 * A stateless server never sees the client's `initialize`, so the relay also remembers what a
 * client declared there and gives it to the servers of that client's calls: per session, since
 * two clients may share one access token. The endpoint names the session in the initialize
 * response's `Mcp-Session-Id`, which 2025-era clients send back on every request; a request
 * without one is served as a client that declared nothing. A `notifications/cancelled` for a
 * waiting call (a POST of its own, on any instance) reaches it the same way as an answer.
 */
import { randomBytes } from 'node:crypto'
import {
  type AuthInfo,
  type ClientCapabilities,
  isJSONRPCRequest,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type McpServer,
  type WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server'
import { type Clock, systemClock } from '../../core/clock.ts'
import { ForbiddenError, type KilnError, NotFoundError } from '../../core/errors.ts'
import { keyDigest } from '../../core/kv/key-digest.ts'
import type { KeyValueStore } from '../../core/kv/key-value-store.ts'
import { MemoryKeyValueStore } from '../../core/kv/memory-store.ts'
import type { Logger } from '../../core/logger.ts'
import { MemoryPubSub, type PubSub } from '../../core/pubsub.ts'
import type { McpCaller } from '../data/access.ts'

/** How long a call waits for the client's answer by default: 5 minutes. */
export const SERVER_REQUEST_TIMEOUT_MS = 5 * 60_000

/** How long a client's declared capabilities are kept without a token expiry to go by. */
const CAPABILITIES_TTL_MS = 60 * 60_000

export interface ServerRequestRelayOptions {
  /**
   * Where waiting calls and clients' capabilities are recorded: the app's shared store
   * (`shared.kv`, Redis when REDIS_URL is set). Default: this process's memory.
   */
  store?: KeyValueStore
  /**
   * How an answer reaches the instance whose call waits for it: the app's `shared.pubsub`
   * (Redis PUBLISH/SUBSCRIBE when REDIS_URL is set). Default: this process's memory.
   */
  pubsub?: PubSub
  /**
   * How long a call waits for the client's answer; then an elicitation counts as cancelled
   * (an approval as declined) and any other request fails. Keep it within the approvals'
   * lifetime. Default 5 minutes.
   */
  timeoutMs?: number
  clock?: Clock
  logger?: Logger
}

/** Why the answer's POST was not accepted, for the endpoint to render: the error, its JSON-RPC code. */
export interface RelayRefusal {
  error: KilnError
  code: number
}

/** A server→client request waiting for its answer, as recorded in the shared store. */
interface Waiting {
  userId: string | null
  clientId: string | null
  tenantId: string | null
}

/** One call's attachment to the relay: what it sends is relayed until `release`. */
export interface RelayedCall {
  release(): Promise<void>
}

export interface ServerRequestRelay {
  /**
   * Remembers what the client declared in an `initialize` request, for its later calls in
   * `session` (a new random id the endpoint then sends back as `Mcp-Session-Id`): true when
   * kept, false when there is nothing to keep (the client can be asked nothing) or no store.
   */
  remember(body: unknown, authInfo: AuthInfo, caller: McpCaller, session: string): Promise<boolean>
  /** The capabilities the client of this session declared, if it initialized with this token. */
  capabilities(
    authInfo: AuthInfo,
    caller: McpCaller,
    session: string | undefined,
  ): Promise<ClientCapabilities | undefined>
  /**
   * Gives the call's server the client's capabilities and relays the requests it sends on the
   * transport: unique ids out, answers (from any instance) back in, and the client's
   * cancellation of the call (`call`: the session and the call's request id).
   */
  attach(
    server: McpServer,
    transport: WebStandardStreamableHTTPServerTransport,
    caller: McpCaller,
    capabilities: ClientCapabilities,
    call?: { authInfo: AuthInfo; session: string; requestId: string | number },
  ): Promise<RelayedCall>
  /**
   * Takes a POSTed `notifications/cancelled` of a session's call: delivered to the call that
   * waits (on whichever instance), or nothing when none does.
   */
  cancel(body: unknown, authInfo: AuthInfo, caller: McpCaller, session: string): Promise<void>
  /**
   * Takes a POSTed answer (a JSON-RPC response or a batch of them) to requests the relay sent:
   * undefined once delivered, else why not.
   */
  answer(body: unknown, caller: McpCaller): Promise<RelayRefusal | undefined>
}

/** True for a JSON-RPC response, or a non-empty batch of nothing but responses. */
export function isAnswer(body: unknown): boolean {
  if (Array.isArray(body)) return body.length > 0 && body.every(isResponse)
  return isResponse(body)
}

function isResponse(message: unknown): boolean {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return false
  const m = message as Record<string, unknown>
  return m.jsonrpc === '2.0' && !('method' in m) && 'id' in m && ('result' in m || 'error' in m)
}

/** Whether the server may send this client requests of its own during a call. */
export function asksClient(capabilities: ClientCapabilities | undefined): boolean {
  return Boolean(capabilities?.elicitation || capabilities?.sampling || capabilities?.roots)
}

const ID_PREFIX = 'kiln-'

export function createServerRequestRelay(
  options: ServerRequestRelayOptions = {},
): ServerRequestRelay {
  const relay: RelayParts = {
    store: options.store ?? new MemoryKeyValueStore(),
    pubsub: options.pubsub ?? new MemoryPubSub(),
    clock: options.clock ?? systemClock,
    timeoutMs: options.timeoutMs ?? SERVER_REQUEST_TIMEOUT_MS,
    logger: options.logger,
  }
  if (!(relay.timeoutMs > 0))
    throw new RangeError('mcp: the server request timeout must be positive')
  const { store, pubsub, logger } = relay

  return {
    remember: (body, authInfo, caller, session) =>
      rememberCapabilities(relay, capabilitiesKey(authInfo, caller, session), body, authInfo),

    async capabilities(authInfo, caller, session) {
      const key = capabilitiesKey(authInfo, caller, session)
      if (!key) return undefined
      try {
        const raw = await store.get(key)
        return raw === undefined ? undefined : (JSON.parse(raw) as ClientCapabilities)
      } catch (error) {
        // Without the store the call runs as for a client that declared nothing.
        logger?.warn({ error: (error as Error).message }, 'mcp: client capabilities unreadable')
        return undefined
      }
    },

    async attach(server, transport, caller, capabilities, call) {
      seedClientCapabilities(server, capabilities)
      const waiting = relayRequests(relay, transport, bindingOf(caller))
      // The client's `notifications/cancelled` for this call, POSTed to any instance, is handed
      // to the call's server as if it came on the call's own connection: its signal aborts.
      const cancels = call && cancelChannel(call.authInfo, caller, call.session, call.requestId)
      const stopCancel = cancels
        ? await pubsub.subscribe(cancels, () => {
            transport.onmessage?.({
              jsonrpc: '2.0',
              method: 'notifications/cancelled',
              params: { requestId: call!.requestId, reason: 'Cancelled by the client' },
            })
          })
        : undefined
      return {
        async release() {
          // The call ended (answered, or the client hung up): nothing waits any more.
          await Promise.allSettled([
            ...[...waiting.values()].map((finish) => finish()),
            stopCancel?.(),
          ])
        },
      }
    },

    async cancel(body, authInfo, caller, session) {
      const requestId = (body as { params?: { requestId?: unknown } } | null)?.params?.requestId
      if (typeof requestId !== 'string' && typeof requestId !== 'number') return
      const name = cancelChannel(authInfo, caller, session, requestId)
      if (name) await pubsub.publish(name, 'cancelled').catch(() => 0)
    },

    async answer(body, caller) {
      const answers = (Array.isArray(body) ? body : [body]) as Array<{ id: unknown }>
      for (const answer of answers) {
        const refusal = await deliver(relay, answer, caller)
        if (refusal) return refusal
      }
      return undefined
    },
  }
}

/** What the relay is made of: where calls wait and answers travel, and how long they wait. */
interface RelayParts {
  store: KeyValueStore
  pubsub: PubSub
  clock: Clock
  timeoutMs: number
  logger: Logger | undefined
}

/** Keeps what a client declared in its `initialize`, under `key`, as long as its token lives. */
async function rememberCapabilities(
  relay: RelayParts,
  key: string | undefined,
  body: unknown,
  authInfo: AuthInfo,
): Promise<boolean> {
  const params = (body as { params?: { capabilities?: unknown } } | null)?.params
  const capabilities = params?.capabilities as ClientCapabilities | undefined
  if (!key || !asksClient(capabilities)) return false
  // As long as the token lives: a refreshed token's client initialized before is asked
  // nothing through the protocol, and gets a link instead.
  const left = authInfo.expiresAt
    ? authInfo.expiresAt * 1000 - relay.clock.now()
    : CAPABILITIES_TTL_MS
  if (left <= 0) return false
  try {
    await relay.store.set(key, JSON.stringify(capabilities), { ttlMs: left })
    return true
  } catch (error) {
    // The client is then asked nothing through the protocol (approvals send a link), and
    // its initialize still succeeds.
    relay.logger?.warn({ error: (error as Error).message }, 'mcp: client capabilities not kept')
    return false
  }
}

/** Who a server→client request was sent to, as its answer must match. */
function bindingOf(caller: McpCaller): Waiting {
  return {
    userId: caller.userId ?? null,
    clientId: caller.clientId ?? null,
    tenantId: caller.tenantId === undefined ? null : String(caller.tenantId),
  }
}

/**
 * Whose declaration it is: the access token's (a new token, a new declaration), or without
 * a token (an app's own `caller`) the caller's client, user and tenant.
 */
function whoseKey(authInfo: AuthInfo, caller: McpCaller, session: string): string | undefined {
  if (authInfo.token) return keyDigest(`token:${authInfo.token}:${session}`)
  if (caller.userId === undefined && caller.clientId === undefined) return undefined
  return keyDigest(
    JSON.stringify(['caller', caller.clientId, caller.userId, caller.tenantId, session]),
  )
}

function capabilitiesKey(authInfo: AuthInfo, caller: McpCaller, session: string | undefined) {
  const whose = session === undefined ? undefined : whoseKey(authInfo, caller, session)
  return whose && `mcp:client-capabilities:${whose}`
}

function cancelChannel(authInfo: AuthInfo, caller: McpCaller, session: string, id: unknown) {
  const whose = whoseKey(authInfo, caller, session)
  return whose && `mcp:cancel:${keyDigest(`${whose}:${JSON.stringify(id)}`)}`
}

/**
 * Replaces the transport's `send`: each request the server sends goes out under an id unique
 * across instances, recorded (bound to `binding`) until its answer, its timeout or the call's
 * end. Answers the map of what waits, by id, each with how to stop waiting.
 */
function relayRequests(
  { store, pubsub, timeoutMs, logger }: RelayParts,
  transport: WebStandardStreamableHTTPServerTransport,
  binding: Waiting,
): Map<string, () => Promise<void>> {
  const waiting = new Map<string, () => Promise<void>>()
  const send = transport.send.bind(transport)
  transport.send = async (message, sendOptions) => {
    if (!isJSONRPCRequest(message)) return send(message, sendOptions)
    const localId = message.id
    const id = `${ID_PREFIX}${randomBytes(24).toString('base64url')}`
    let settled = false
    let timer: NodeJS.Timeout | undefined
    let unsubscribe: (() => Promise<void>) | undefined
    const finish = async () => {
      settled = true
      waiting.delete(id)
      if (timer) clearTimeout(timer)
      await Promise.allSettled([unsubscribe?.(), store.delete(waitingKey(id))])
    }
    const settle = (answer: JSONRPCMessage) => {
      if (settled) return
      void finish()
      // Back under the id the server's request went out with, to the server that waits.
      transport.onmessage?.({ ...answer, id: localId } as JSONRPCMessage)
    }
    await store.set(waitingKey(id), JSON.stringify(binding), { ttlMs: timeoutMs })
    unsubscribe = await pubsub.subscribe(waitingKey(id), (raw) => {
      try {
        settle(JSON.parse(raw) as JSONRPCMessage)
      } catch (error) {
        logger?.warn({ error: (error as Error).message }, 'mcp: unreadable relayed answer')
      }
    })
    waiting.set(id, finish)
    timer = setTimeout(() => settle(noAnswer(message, timeoutMs)), timeoutMs)
    timer.unref?.()
    try {
      await send({ ...message, id } as JSONRPCRequest, sendOptions)
    } catch (error) {
      await finish()
      throw error
    }
  }
  return waiting
}

/** Hands an answer to the call that waits for it, once, if it comes from the right client. */
async function deliver(
  { store, pubsub }: RelayParts,
  answer: { id: unknown },
  caller: McpCaller,
): Promise<RelayRefusal | undefined> {
  // Every refusal is an invalid request (-32600): the answer is not taken.
  const refused = (error: KilnError): RelayRefusal => ({ error, code: -32600 })
  const gone = refused(
    new NotFoundError(
      'No request of this server waits for this answer: it was answered, or it expired',
    ),
  )
  const id = answer.id
  if (typeof id !== 'string' || !id.startsWith(ID_PREFIX)) return gone
  const raw = await store.get(waitingKey(id))
  if (raw === undefined) return gone
  const waiting = JSON.parse(raw) as Waiting
  const expected = bindingOf(caller)
  if ((['userId', 'clientId', 'tenantId'] as const).some((k) => waiting[k] !== expected[k])) {
    // Not consumed: the rightful client can still answer.
    return refused(
      new ForbiddenError('This answer is not from the client and user the request was sent to'),
    )
  }
  // Once: of concurrent answers exactly one takes the record and is delivered.
  if ((await store.take(waitingKey(id))) === undefined) return gone
  const receivers = await pubsub.publish(waitingKey(id), JSON.stringify(answer))
  if (receivers === 0)
    return refused(new NotFoundError('The call waiting for this answer has ended'))
  return undefined
}

/**
 * Gives a per-request server what the client declared in its `initialize` (which that server
 * never saw), so that its capability checks, the SDK's input-required shim and the approval
 * gate see what a session's server would. The SDK (2.x) has no public API for this: the
 * declaration is kept in the server's `_clientCapabilities`, set here and nowhere else
 * (`test/mcp/http/elicitation-relay.test.ts` fails when the SDK stops reading it).
 */
export function seedClientCapabilities(server: McpServer, capabilities: ClientCapabilities): void {
  ;(server.server as unknown as { _clientCapabilities?: ClientCapabilities })._clientCapabilities =
    capabilities
}

/** What a call gets when the client did not answer in time: a cancelled elicitation. */
function noAnswer(request: JSONRPCRequest, timeoutMs: number): JSONRPCMessage {
  if (request.method === 'elicitation/create') {
    return { jsonrpc: '2.0', id: request.id, result: { action: 'cancel' } }
  }
  return {
    jsonrpc: '2.0',
    id: request.id,
    error: { code: -32001, message: `No answer from the client within ${timeoutMs} ms` },
  }
}

/** A waiting request's name: its record's key in the store and its answer's channel. */
function waitingKey(id: string): string {
  return `mcp:server-request:${keyDigest(id)}`
}
