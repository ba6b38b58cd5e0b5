import type { MiddlewareHandler } from 'hono'
import { cors } from 'hono/cors'
import { editResponseHeaders } from '../core/http/response-headers.ts'

/** Options of `oauthCors`. */
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
 *
 * An actual request's two headers are added to the answer once the handler has made it. Hono's
 * `cors` sets them on `c.res` before the handler runs instead, and the handler's own `Response`
 * is then copied into a new one: on Node that turns a plain string answer into a web stream
 * and a `Headers` object, the largest saving of a `/mcp` call in docs/performance-archive.md's MCP notes.
 * @example
 * ```ts
 * app.use('/mcp', oauthCors()) // answers preflights before auth
 * ```
 */
export function oauthCors(options: OAuthCorsOptions = {}): MiddlewareHandler {
  const exposeHeaders = ['WWW-Authenticate', 'Mcp-Session-Id', ...(options.exposeHeaders ?? [])]
  const preflight = cors({
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
    exposeHeaders,
    maxAge: 86400,
  })
  const exposed = exposeHeaders.join(',')
  return async function oauthCorsMiddleware(c, next) {
    if (c.req.method === 'OPTIONS') return preflight(c, next)
    await next()
    editResponseHeaders(c, (headers) => {
      headers.set('Access-Control-Allow-Origin', '*')
      headers.set('Access-Control-Expose-Headers', exposed)
    })
  }
}
