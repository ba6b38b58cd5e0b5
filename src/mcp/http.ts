import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { type Context, type Handler, Hono } from 'hono'
import type { Logger } from '../core/index.ts'
import {
  type BearerEnv,
  bearerAuth,
  getAccessToken,
  oauthCors,
  type ValidateBearer,
} from '../oauth/index.ts'
import type { McpCaller } from './crud.ts'

export interface McpHttpHandlerOptions {
  /** Builds the MCP server that answers one request, acting as `caller`. */
  createServer: (caller: McpCaller) => McpServer
  /**
   * Who a request acts as. Default: the verified access token of `bearerAuth` — its `sub`
   * as the user and its `tenant_id` as the tenant.
   */
  caller?: (c: Context) => McpCaller
  logger?: Logger
}

/** The caller of a request behind `bearerAuth`: the token's subject and tenant. */
export function callerFromAccessToken(c: Context): McpCaller {
  const claims = getAccessToken(c)
  return { userId: claims.sub, tenantId: claims.tenant_id }
}

const METHOD_NOT_ALLOWED = JSON.stringify({
  jsonrpc: '2.0',
  error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless, use POST' },
  id: null,
})

/**
 * The Streamable HTTP endpoint, stateless: every POST gets a fresh server and transport bound to
 * the request's caller, and JSON responses instead of SSE streams. Nothing lives between
 * requests, so any instance behind a load balancer can answer any request. GET (a standalone
 * SSE stream) and DELETE (ending a session) have nothing to act on and answer 405.
 */
export function mcpHttpHandler(options: McpHttpHandlerOptions): Handler {
  const { createServer, caller = callerFromAccessToken, logger } = options
  if (typeof createServer !== 'function') {
    throw new TypeError('mcpHttpHandler: `createServer` is required')
  }
  return async function mcpHandler(c) {
    if (c.req.method !== 'POST') {
      return new Response(METHOD_NOT_ALLOWED, {
        status: 405,
        headers: { 'Content-Type': 'application/json', Allow: 'POST' },
      })
    }
    const server = createServer(caller(c))
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    })
    transport.onerror = (error) => logger?.warn({ error: error.message }, 'mcp: transport error')
    try {
      await server.connect(transport)
      // With JSON responses the body is complete when handleRequest resolves.
      return await transport.handleRequest(c.req.raw)
    } finally {
      await server.close()
    }
  }
}

export interface McpEndpointOptions extends McpHttpHandlerOptions {
  /** Validates the bearer token (kiln/oauth `createBearerValidator`). */
  validator: ValidateBearer
  /** This resource's protected-resource metadata URL, sent in every 401 challenge. */
  resourceMetadataUrl: string
  /** Scopes every request must carry (for example `['mcp']`). */
  scopes?: string[]
}

/**
 * The protected MCP endpoint as a Hono app to mount (`app.route('/mcp', mcpEndpoint(…))`):
 * CORS answers preflights before auth, `bearerAuth` answers 401 with `resource_metadata`, and
 * tool calls run as the token's user and tenant.
 */
export function mcpEndpoint(options: McpEndpointOptions): Hono<BearerEnv> {
  const app = new Hono<BearerEnv>()
  const cors = oauthCors()
  const auth = bearerAuth({
    validator: options.validator,
    resourceMetadataUrl: options.resourceMetadataUrl,
    ...(options.scopes ? { scopes: options.scopes } : {}),
  })
  const handler = mcpHttpHandler(options)
  app.use('/', cors)
  app.use('/', auth)
  app.all('/', handler)
  return app
}
