import type { MiddlewareHandler } from 'hono'
import { cors } from 'hono/cors'

export interface OAuthCorsOptions {
  /** Extra request headers to allow besides the MCP ones. */
  allowHeaders?: string[]
  /** Extra response headers to expose besides `WWW-Authenticate` and `Mcp-Session-Id`. */
  exposeHeaders?: string[]
}

/**
 * CORS for the routes browser-based MCP clients call cross-origin: discovery, `/register`,
 * `/token`, `/device_authorization` and `/mcp`. Any origin, no credentials (tokens travel in
 * `Authorization`, not cookies); preflights are answered before any auth runs.
 */
export function oauthCors(options: OAuthCorsOptions = {}): MiddlewareHandler {
  return cors({
    origin: '*',
    allowMethods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
    allowHeaders: [
      'Authorization',
      'Content-Type',
      'MCP-Protocol-Version',
      'Mcp-Session-Id',
      'Last-Event-ID',
      ...(options.allowHeaders ?? []),
    ],
    exposeHeaders: ['WWW-Authenticate', 'Mcp-Session-Id', ...(options.exposeHeaders ?? [])],
    maxAge: 86400,
  })
}
