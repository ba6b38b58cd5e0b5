import {
  type AuthInfo,
  type ClientCapabilities,
  createMcpHandler,
  isInitializeRequest,
  isJsonContentType,
  isLegacyRequest,
  type McpServer,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server'
import type { Context, Handler } from 'hono'
import {
  InvalidJsonError,
  type KilnError,
  MethodNotAllowedError,
  PayloadTooLargeError,
  UnsupportedMediaTypeError,
} from '../../core/errors.ts'
import { readBodyBytes } from '../../core/http/index.ts'
import type { Logger } from '../../core/index.ts'
import { type AccessTokenClaims, getAccessToken } from '../../oauth/index.ts'
import type { McpCaller } from '../data/access.ts'
import {
  answerSubscribeCall,
  declaringSubscribe,
  internalsOf,
  isListen,
  isSubscribeCall,
  type McpSubscriptions,
  serveListen,
  serveSessionStream,
} from '../subscriptions/index.ts'
import {
  asksClient,
  createServerRequestRelay,
  isAnswer,
  type ServerRequestRelay,
  type ServerRequestRelayOptions,
} from './elicitation-relay.ts'
import {
  acceptsEventStream,
  closingWhenDone,
  hasProgressToken,
  isCancellation,
  isPlainLegacyCall,
  isPlainModernCall,
  isToolCall,
  newSessionId,
  sessionOf,
  withSession,
} from './request.ts'

/** Options of `mcpHttpHandler`. */
export interface McpHttpHandlerOptions {
  /** Builds the MCP server that answers one request, acting as `caller`. */
  createServer: (caller: McpCaller) => McpServer
  /**
   * Who a request acts as. Default: the verified access token of `bearerAuth` — its `sub`
   * as the user, its `tenant_id` as the tenant and its scopes.
   */
  caller?: (c: Context) => McpCaller
  logger?: Logger
  /** The largest request body read, in bytes (413 above it). Default 1 MiB. */
  maxRequestBodySize?: number
  /** This resource's protected-resource metadata URL, sent in 403 scope challenges. */
  resourceMetadataUrl?: string
  /**
   * How a 2025-era client's answers to the server's own requests (an elicitation asking the
   * user to approve a call) reach the call that waits, on whichever instance it runs: pass
   * the app's `shared.kv` and `shared.pubsub`. Default: this process's memory, one instance.
   */
  serverRequests?: ServerRequestRelayOptions
  /**
   * How often a 2025-era SSE answer sends a comment frame while a call waits (for a person's
   * approval, say), so that proxies do not close it as idle. Default 15 s (the SDK's).
   */
  keepAliveMs?: number
  /**
   * Resource subscriptions (`mcpSubscriptions`): the server declares `resources.subscribe`,
   * 2026-07-28 clients listen, 2025-era sessions subscribe and open a `GET` stream.
   */
  subscriptions?: McpSubscriptions
}

/**
 * The caller of a request behind `bearerAuth`: the token's subject, tenant, client, scopes
 * and the grant the person approved.
 */
export function callerFromAccessToken(c: Context): McpCaller {
  const claims = getAccessToken(c)
  return {
    userId: claims.sub,
    tenantId: claims.tenant_id,
    clientId: claims.client_id,
    scopes: (claims.scope ?? '').split(' ').filter(Boolean),
    grant: claims.grant,
  }
}

/**
 * An error as the transport answers it: its status and headers, the body a JSON-RPC error
 * without an id (`code`: by default `-32700` for a body that is not JSON, `-32000` otherwise).
 */
export function jsonRpcError(
  error: KilnError,
  code = error.code === 'invalid_json' ? -32700 : -32000,
): Response {
  return error.toResponse({}, { jsonrpc: '2.0', error: { code, message: error.message }, id: null })
}

/** Where the caller rides from the Hono handler to the server factory: `AuthInfo.extra`. */
const CALLER = 'kiln.caller'

/**
 * The Streamable HTTP endpoint for both protocol eras, stateless. 2026-07-28 requests (the
 * per-request `_meta` envelope, `server/discover`, the `Mcp-Method`/`Mcp-Name` headers) go to
 * the SDK's stateless entry (`createMcpHandler`); 2025-era requests (`initialize`, then calls
 * without a session) go to a Streamable HTTP transport with JSON responses, exactly as before
 * the 2026 revision. Either way a fresh server bound to the request's caller answers one
 * request and nothing lives between requests, so any instance behind a load balancer answers
 * any request. GET and DELETE (2025 session streams and teardown) answer 405.
 * @example
 * ```ts
 * app.post('/mcp', mcpHttpHandler({ createServer: (caller) => createMcpServer({ dataTools: { tools, caller } }) }))
 * ```
 */
export function mcpHttpHandler(options: McpHttpHandlerOptions): Handler {
  const { caller = callerFromAccessToken, logger } = options
  if (typeof options.createServer !== 'function') {
    throw new TypeError('mcpHttpHandler: `createServer` is required')
  }
  const subscriptions = options.subscriptions && internalsOf(options.subscriptions)
  const createServer = (caller: McpCaller) =>
    subscriptions ? declaringSubscribe(options.createServer(caller)) : options.createServer(caller)
  const maxRequestBodySize = options.maxRequestBodySize ?? 1024 * 1024
  const onerror = (error: Error) => logger?.debug({ error: error.message }, 'mcp: request refused')
  const relay = createServerRequestRelay({ logger, ...options.serverRequests })
  const legacy: LegacyEra = {
    createServer,
    relay,
    subscriptions,
    onerror,
    keepAliveMs: options.keepAliveMs,
  }
  const modern = createMcpHandler(({ authInfo }) => createServer(callerOf(authInfo)), {
    legacy: 'reject',
    maxRequestBodySize,
    onerror,
  })

  return async function mcpHandler(c) {
    const request = c.req.raw
    const session = sessionOf(request)
    if (subscriptions && session && request.method === 'GET' && acceptsEventStream(request)) {
      const { context, store } = subscriptions
      const expiresAt = authInfoOf(c, caller(c)).expiresAt
      return await serveSessionStream(context, store, caller(c), session, expiresAt)
    }
    if (request.method !== 'POST') {
      return jsonRpcError(
        new MethodNotAllowedError(
          ['POST'],
          'Method not allowed: this endpoint is stateless, use POST',
        ),
      )
    }
    if (!isJsonContentType(request.headers.get('content-type'))) {
      return jsonRpcError(
        new UnsupportedMediaTypeError(
          'Unsupported Media Type: Content-Type must be application/json',
        ),
      )
    }
    // The body is read once, within the limit, and handed to whichever era answers.
    const body = await readJsonBody(request, maxRequestBodySize)
    if (body instanceof Response) return body
    const authInfo = authInfoOf(c, caller(c))
    if (options.resourceMetadataUrl) authInfo.resourceMetadataUrl = options.resourceMetadataUrl
    // A 2025-era client's answer to a request the server sent it during a call.
    if (isAnswer(body)) {
      const refusal = await relay.answer(body, callerOf(authInfo))
      if (refusal) return jsonRpcError(refusal.error, refusal.code)
      return new Response(null, { status: 202 })
    }
    if (
      !isPlainModernCall(request, body) &&
      (isPlainLegacyCall(request, body) || (await isLegacyRequest(request, body)))
    ) {
      return serveLegacy(legacy, request, body, authInfo)
    }
    if (subscriptions && isListen(body)) {
      const listener = callerOf(authInfo)
      const serve = () => options.createServer(listener)
      return serveListen(subscriptions.context, request, body, authInfo, listener, serve)
    }
    return modern.fetch(request, { parsedBody: body, authInfo })
  }
}

/** What the 2025-era path needs of the handler: its servers, the relay, transport options. */
interface LegacyEra {
  createServer: (caller: McpCaller) => McpServer
  relay: ServerRequestRelay
  subscriptions: ReturnType<typeof internalsOf> | undefined
  onerror: (error: Error) => void
  keepAliveMs: number | undefined
}

function callerOf(authInfo: AuthInfo | undefined): McpCaller {
  return (authInfo?.extra?.[CALLER] as McpCaller | undefined) ?? {}
}

/**
 * 2025-era: one server and one transport for this request. The answer is JSON, unless the
 * call can carry notifications before its result (a `progressToken`, or a server that
 * declares `logging`) or the server may ask the client something (a tool call of a client
 * that declared elicitation, sampling or roots; the relay carries the client's answer back)
 * and the client accepts a stream: then it is an SSE stream, since a JSON answer would drop
 * them.
 */
async function serveLegacy(era: LegacyEra, request: Request, body: unknown, authInfo: AuthInfo) {
  const { relay, subscriptions } = era
  const caller = callerOf(authInfo)
  if (isInitializeRequest(body)) {
    // The session names this client's declaration: another client may share the token.
    // Only a client that can be asked something needs its declaration kept, and a session.
    const session = newSessionId()
    const kept = await relay.remember(body, authInfo, caller, session)
    const response = await serveLegacyCall(era, request, body, authInfo, undefined)
    // A session also holds the client's resource subscriptions.
    return kept || subscriptions ? withSession(response, session) : response
  }
  const session = sessionOf(request)
  if (subscriptions && isSubscribeCall(body)) {
    const { context, store } = subscriptions
    return answerSubscribeCall(context, store, body, caller, session)
  }
  if (session && isCancellation(body)) await relay.cancel(body, authInfo, caller, session)
  // A tool call of a client that declared it can be asked things (elicitation, say) is
  // streamed, so that the server's questions can go out on the stream; see the relay.
  const capabilities =
    isToolCall(body) && acceptsEventStream(request)
      ? await relay.capabilities(authInfo, caller, session)
      : undefined
  return serveLegacyCall(era, request, body, authInfo, capabilities, session)
}

async function serveLegacyCall(
  { createServer, relay, onerror, keepAliveMs }: LegacyEra,
  request: Request,
  body: unknown,
  authInfo: AuthInfo,
  capabilities: ClientCapabilities | undefined,
  session?: string,
) {
  const caller = callerOf(authInfo)
  const server = createServer(caller)
  const asks = asksClient(capabilities)
  const streams =
    acceptsEventStream(request) &&
    (asks ||
      hasProgressToken(body) ||
      (isToolCall(body) && server.server.getCapabilities().logging !== undefined))
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: !streams,
    // Comment frames keep a long wait (a person deciding on the approval page) from being
    // cut by a proxy's idle timeout.
    ...(keepAliveMs !== undefined ? { keepAliveMs } : {}),
  })
  transport.onerror = onerror
  const requestId = (body as { id?: unknown }).id
  const call =
    session && (typeof requestId === 'string' || typeof requestId === 'number')
      ? { authInfo, session, requestId }
      : undefined
  const relayed =
    asks && capabilities
      ? await relay.attach(server, transport, caller, capabilities, call)
      : undefined
  try {
    await server.connect(transport)
    if (!streams) {
      // With JSON responses the exchange is over when handleRequest resolves: no handler,
      // stream or timer is left, and the server and transport are dropped with the request.
      // They are not closed: closing builds a "connection closed" error (with its stack) to
      // settle pending requests there are none of, a measurable share of a call's CPU.
      return await transport.handleRequest(request, { parsedBody: body, authInfo })
    }
    const response = await transport.handleRequest(request, { parsedBody: body, authInfo })
    return closingWhenDone(response, () => {
      void relayed?.release()
      void server.close().catch(() => {})
    })
  } catch (error) {
    await relayed?.release()
    await server.close()
    throw error
  }
}

/** The request's JSON body, read within the limit, or the JSON-RPC error that answers it. */
async function readJsonBody(request: Request, maxRequestBodySize: number): Promise<unknown> {
  let text: string
  try {
    text = utf8.decode(await readBodyBytes(request, maxRequestBodySize))
  } catch (error) {
    if (error instanceof PayloadTooLargeError) {
      return jsonRpcError(new PayloadTooLargeError('Request body too large'))
    }
    throw error
  }
  try {
    return JSON.parse(text)
  } catch {
    return jsonRpcError(new InvalidJsonError('Parse error: the request body is not valid JSON'))
  }
}

const utf8 = new TextDecoder()

/**
 * The SDK's view of the request's credentials: the token's client, scopes and expiry (which
 * drive per-tool scope challenges) and kiln's caller. Without a bearer token (a custom
 * `caller`), the token is empty and no scope challenge applies.
 */
function authInfoOf(c: Context, caller: McpCaller): AuthInfo {
  const claims = c.get('accessToken') as AccessTokenClaims | undefined
  const authorization = c.req.header('authorization') ?? ''
  return {
    token: claims ? authorization.replace(/^Bearer\s+/i, '') : '',
    clientId: claims?.client_id ?? caller.clientId ?? '',
    scopes: [...(caller.scopes ?? [])],
    ...(claims ? { expiresAt: claims.exp } : {}),
    extra: { [CALLER]: caller },
  }
}
