import { hash } from 'node:crypto'
import type { Context, MiddlewareHandler } from 'hono'
import {
  createRateLimiters,
  editResponseHeaders,
  type RateLimiters,
  windowLimit,
} from '../../core/http/index.ts'
import type { LimitResult, WindowLimitOption } from '../../core/http/rate-limiters.ts'
import type { Logger } from '../../core/logger.ts'
import type { McpCaller } from '../data/access.ts'

/**
 * Requests per window.
 * @deprecated kiln/core's `WindowLimitOption`, the one type of the OAuth and MCP limits.
 */
export type McpLimit = WindowLimitOption

/** The limits of `/mcp`: `mcpEndpoint({ rateLimit })` takes them without `logger`. */
export interface McpRateLimitOptions {
  /**
   * kiln's rate limiters (`createRateLimiters({ redis: shared.client, trustProxy })`): with
   * Redis every instance counts together. Without them the counts live in this process.
   * The limiters are `mcp-client` and `mcp-user`; define one of those names yourself to change
   * it.
   */
  rateLimiters?: RateLimiters | undefined
  /** Requests per OAuth client, all its users together. Default 600 per minute. */
  perClient?: WindowLimitOption | undefined
  /** Requests per user (within their tenant), all their clients together. Default 120 per minute. */
  perUser?: WindowLimitOption | undefined
  logger?: Logger | undefined
}

export const DEFAULT_MCP_LIMITS = Object.freeze({
  perClient: { points: 600, durationSeconds: 60 },
  perUser: { points: 120, durationSeconds: 60 },
})

/** A short, fixed-length bucket name: client ids can be long URLs, user ids need not show. */
const bucket = (kind: string, value: string) =>
  `${kind}:${hash('sha256', value, 'base64url').slice(0, 22)}`

/**
 * Counts each authenticated `/mcp` request against its client and its user, before any tool
 * runs. Over either limit the answer is 429 with `Retry-After` and a JSON-RPC error without an
 * id; every answer carries the `RateLimit-*` values of the tighter of the two. A caller
 * without a client or a user (a custom `caller`) is counted as `unknown`.
 */
export function mcpRateLimit(
  options: McpRateLimitOptions,
  callerOf: (c: Context) => McpCaller,
): MiddlewareHandler {
  const limiters =
    options.rateLimiters ?? createRateLimiters(options.logger ? { logger: options.logger } : {})
  const perClient = windowLimit(
    options.perClient ?? DEFAULT_MCP_LIMITS.perClient,
    'mcpEndpoint: rateLimit.perClient',
  )
  const perUser = windowLimit(
    options.perUser ?? DEFAULT_MCP_LIMITS.perUser,
    'mcpEndpoint: rateLimit.perUser',
  )
  limiters.define('mcp-client', (r) => ({ key: bucket('client', r.subject ?? ''), ...perClient }))
  limiters.define('mcp-user', (r) => ({ key: bucket('user', r.subject ?? ''), ...perUser }))

  return async function mcpRateLimitMiddleware(c, next) {
    const caller = callerOf(c)
    const request = { ip: '', apiKey: undefined, method: c.req.method, path: c.req.path }
    const user = JSON.stringify([caller.tenantId ?? null, caller.userId ?? 'unknown'])
    const results = await Promise.all([
      limiters.consume('mcp-client', { ...request, subject: caller.clientId ?? 'unknown' }),
      limiters.consume('mcp-user', { ...request, subject: user }),
    ])
    const tightest = results.reduce((a, b) => (b.remaining < a.remaining ? b : a))
    const refused = results.find((result) => !result.allowed)
    if (refused) return tooManyRequests(refused)
    await next()
    editResponseHeaders(c, (headers) => setHeaders(headers, tightest))
  }
}

function setHeaders(headers: Headers, result: LimitResult): void {
  headers.set('RateLimit-Limit', String(result.limit))
  headers.set('RateLimit-Remaining', String(result.remaining))
  headers.set('RateLimit-Reset', String(result.resetSeconds))
}

function tooManyRequests(result: LimitResult): Response {
  const retryAfter = Math.max(result.resetSeconds, 1)
  const headers = new Headers({
    'Content-Type': 'application/json',
    'Retry-After': String(retryAfter),
  })
  setHeaders(headers, result)
  const message = `Too Many Requests: retry in ${retryAfter} s`
  return new Response(
    JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }),
    { status: 429, headers },
  )
}
