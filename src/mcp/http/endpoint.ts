import { randomBytes } from 'node:crypto'
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
import { type Context, type Handler, Hono, type MiddlewareHandler } from 'hono'
import {
  ForbiddenError,
  InvalidJsonError,
  type KilnError,
  MethodNotAllowedError,
  PayloadTooLargeError,
  UnsupportedMediaTypeError,
} from '../../core/errors.ts'
import {
  noSniff,
  type OriginGuardOptions,
  originPolicy,
  originRefusal,
  readBodyBytes,
} from '../../core/http/index.ts'
import type { Logger } from '../../core/index.ts'
import {
  type AccessTokenClaims,
  type BearerEnv,
  bearerAuth,
  getAccessToken,
  oauthCors,
  type ValidateBearer,
} from '../../oauth/index.ts'
import { DEFAULT_TOOL_SCOPES, type McpCaller } from '../data/access.ts'
import {
  asksClient,
  createServerRequestRelay,
  isAnswer,
  type ServerRequestRelayOptions,
} from './elicitation-relay.ts'
import { type McpRateLimitOptions, mcpRateLimit } from './rate-limit.ts'
import {
  acceptsEventStream,
  closingWhenDone,
  hasProgressToken,
  isPlainLegacyCall,
  isPlainModernCall,
  isToolCall,
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
function jsonRpcError(
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
 */
export function mcpHttpHandler(options: McpHttpHandlerOptions): Handler {
  const { createServer, caller = callerFromAccessToken, logger } = options
  if (typeof createServer !== 'function') {
    throw new TypeError('mcpHttpHandler: `createServer` is required')
  }
  const maxRequestBodySize = options.maxRequestBodySize ?? 1024 * 1024
  const callerOf = (authInfo: AuthInfo | undefined) =>
    (authInfo?.extra?.[CALLER] as McpCaller | undefined) ?? {}
  const onerror = (error: Error) => logger?.debug({ error: error.message }, 'mcp: request refused')
  const relay = createServerRequestRelay({ logger, ...options.serverRequests })
  const modern = createMcpHandler(({ authInfo }) => createServer(callerOf(authInfo)), {
    legacy: 'reject',
    maxRequestBodySize,
    onerror,
  })

  /**
   * 2025-era: one server and one transport for this request. The answer is JSON, unless the
   * call can carry notifications before its result (a `progressToken`, or a server that
   * declares `logging`) or the server may ask the client something (a tool call of a client
   * that declared elicitation, sampling or roots; the relay carries the client's answer back)
   * and the client accepts a stream: then it is an SSE stream, since a JSON answer would drop
   * them.
   */
  async function serveLegacy(request: Request, body: unknown, authInfo: AuthInfo) {
    const caller = callerOf(authInfo)
    if (isInitializeRequest(body)) {
      // The session names this client's declaration: another client may share the token.
      // Only a client that can be asked something needs its declaration kept, and a session.
      const session = newSessionId()
      const kept = await relay.remember(body, authInfo, caller, session)
      const response = await serveLegacyCall(request, body, authInfo, undefined)
      return kept ? withSession(response, session) : response
    }
    const session = sessionOf(request)
    if (session && isCancellation(body)) await relay.cancel(body, authInfo, caller, session)
    // A tool call of a client that declared it can be asked things (elicitation, say) is
    // streamed, so that the server's questions can go out on the stream; see the relay.
    const capabilities =
      isToolCall(body) && acceptsEventStream(request)
        ? await relay.capabilities(authInfo, caller, session)
        : undefined
    return serveLegacyCall(request, body, authInfo, capabilities, session)
  }

  async function serveLegacyCall(
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
      ...(options.keepAliveMs !== undefined ? { keepAliveMs: options.keepAliveMs } : {}),
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

  return async function mcpHandler(c) {
    const request = c.req.raw
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
    let text: string
    try {
      text = utf8.decode(await readBodyBytes(request, maxRequestBodySize))
    } catch (error) {
      if (error instanceof PayloadTooLargeError) {
        return jsonRpcError(new PayloadTooLargeError('Request body too large'))
      }
      throw error
    }
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      return jsonRpcError(new InvalidJsonError('Parse error: the request body is not valid JSON'))
    }
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
      return serveLegacy(request, body, authInfo)
    }
    return modern.fetch(request, { parsedBody: body, authInfo })
  }
}

const utf8 = new TextDecoder()

/** The id a 2025-era client's `initialize` answer names its session with (`Mcp-Session-Id`). */
function newSessionId(): string {
  return randomBytes(24).toString('base64url')
}

function sessionOf(request: Request): string | undefined {
  const session = request.headers.get('mcp-session-id')
  return session && /^[\w-]{1,128}$/.test(session) ? session : undefined
}

function withSession(response: Response, session: string): Response {
  const headers = new Headers(response.headers)
  headers.set('mcp-session-id', session)
  return new Response(response.body, { status: response.status, headers })
}

function isCancellation(body: unknown): boolean {
  return (body as { method?: unknown } | null)?.method === 'notifications/cancelled'
}

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

/** Options of `mcpEndpoint`. */
export interface McpEndpointOptions extends McpHttpHandlerOptions {
  /** Validates the bearer token (kiln/oauth `createBearerValidator`). */
  validator: ValidateBearer
  resourceMetadataUrl: string
  /** Scopes every request must carry, whatever the tool (the tools check their own). */
  scopes?: string[]
  /**
   * The `scope` of the 401 challenges, which clients ask for when they authorize. Default:
   * `scopes` and the data tools' `mcp:read` and `mcp:write`.
   */
  challengeScopes?: string[]
  /**
   * The allowed `Origin` and `Host` values (DNS-rebinding protection). Default: the origin of
   * `resourceMetadataUrl`, which is the app's `APP_URL`. `false` turns the check off.
   */
  origins?: OriginGuardOptions | false
  /**
   * Requests per OAuth client and per user, counted after authentication and before any tool
   * runs (429 with `Retry-After` over either). Pass the app's `rateLimiters` to share the
   * counts through Redis. Defaults: 600 per minute per client, 120 per minute per user.
   */
  rateLimit?: Omit<McpRateLimitOptions, 'logger'>
}

/**
 * 403 for a request whose `Origin` or `Host` is not the app's, before authentication: the
 * Streamable HTTP transport says servers MUST validate `Origin` (a page on a rebinding domain
 * reaches a local server with its own name). The body is a JSON-RPC error without an id.
 */
function mcpOriginGuard(options: OriginGuardOptions): MiddlewareHandler {
  const policy = originPolicy(options)
  return async function mcpOriginGuardMiddleware(c, next) {
    const refusal = originRefusal(c.req.raw, policy)
    if (refusal) return jsonRpcError(new ForbiddenError(`Forbidden: ${refusal}`))
    await next()
  }
}

/**
 * The protected MCP endpoint as a Hono app to mount (`app.route('/mcp', mcpEndpoint(…))`):
 * CORS answers preflights, a foreign `Origin` or `Host` gets 403, `bearerAuth` answers 401 with
 * `resource_metadata` (and 403 for a scope every request needs), each client and user is
 * rate-limited (429 with `Retry-After`), and tool calls run as the token's user and tenant,
 * with the token's scopes and grant.
 * @example
 * ```ts
 * app.route('/mcp', mcpEndpoint({
 *   validator,
 *   resourceMetadataUrl: `${oauthConfig.issuer}/.well-known/oauth-protected-resource/mcp`,
 *   createServer: (caller) => createMcpServer({ dataTools: { tools, caller } }),
 * }))
 * ```
 */
export function mcpEndpoint(options: McpEndpointOptions): Hono<BearerEnv> {
  const app = new Hono<BearerEnv>()
  const auth = bearerAuth({
    validator: options.validator,
    resourceMetadataUrl: options.resourceMetadataUrl,
    ...(options.scopes ? { scopes: options.scopes } : {}),
    challengeScopes: options.challengeScopes ?? [
      ...new Set([...(options.scopes ?? []), ...Object.values(DEFAULT_TOOL_SCOPES)]),
    ],
  })
  const handler = mcpHttpHandler(options)
  app.use('/', noSniff())
  app.use('/', oauthCors())
  if (options.origins !== false) {
    app.use('/', mcpOriginGuard(options.origins ?? { appUrl: options.resourceMetadataUrl }))
  }
  app.use('/', auth)
  app.use(
    '/',
    mcpRateLimit(
      { ...options.rateLimit, logger: options.logger },
      options.caller ?? callerFromAccessToken,
    ),
  )
  app.all('/', handler)
  return app
}
