import { Hono, type MiddlewareHandler } from 'hono'
import { ForbiddenError } from '../../core/errors.ts'
import {
  noSniff,
  type OriginGuardOptions,
  originPolicy,
  originRefusal,
} from '../../core/http/index.ts'
import { type BearerEnv, bearerAuth, oauthCors, type ValidateBearer } from '../../oauth/index.ts'
import { DEFAULT_TOOL_SCOPES } from '../data/access.ts'
import {
  callerFromAccessToken,
  jsonRpcError,
  type McpHttpHandlerOptions,
  mcpHttpHandler,
} from './endpoint.ts'
import { type McpRateLimitOptions, mcpRateLimit } from './rate-limit.ts'

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
