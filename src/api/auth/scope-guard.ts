import type { MiddlewareHandler } from 'hono'
import { findTargetHandler } from 'hono/utils/handler'
import { isValidScope } from '../provider/scopes.ts'
import { type ApiEnv, requireScopes } from './api-key-auth.ts'

const guardScopes = new WeakMap<object, readonly string[]>()

/**
 * A route middleware that lets a request through only when its API key has every one of
 * `scopes` (`*` on a key passes all): a 403 `{ "error": … }` otherwise, a 401 when the route
 * is not behind `apiKeyAuth`. Generated controllers put one on each route. The OpenAPI
 * document lists the scopes each operation needs (`routeScopes`).
 * @example
 * ```ts
 * app.post('/api/v1/posts/:id/publish', scopeGuard('posts:publish'), (c) => c.body(null, 204))
 * ```
 */
export function scopeGuard(...scopes: string[]): MiddlewareHandler<ApiEnv> {
  if (scopes.length === 0) throw new TypeError('scopeGuard: name at least one scope')
  const bad = scopes.find((scope) => !isValidScope(scope))
  if (bad !== undefined) throw new TypeError(`scopeGuard: invalid scope ${JSON.stringify(bad)}`)
  const guard: MiddlewareHandler<ApiEnv> = async function scopeGuardMiddleware(c, next) {
    requireScopes(c, ...scopes)
    await next()
  }
  guardScopes.set(guard, Object.freeze([...scopes]))
  return guard
}

/** The scopes a `scopeGuard` handler requires (seen through Hono's wrappers), else undefined. */
export function routeScopes(handler: unknown): readonly string[] | undefined {
  if (typeof handler !== 'function') return undefined
  return guardScopes.get(findTargetHandler(handler as Parameters<typeof findTargetHandler>[0]))
}
