import { Hono } from 'hono'
import { type ApiEnv, type ApiKeyProvider, apiKeyAuth, getApiKey, requireScopes } from 'kilnjs/api'
import { createRateLimiters, errorHandler, type Logger, throttle } from 'kilnjs/core'

/**
 * A custom route group beside the generated API: every route needs a valid API key and is
 * limited by the `api` limiter (60 requests per minute per IP); `DELETE /reports/:id` also
 * needs the `reports:delete` scope (403 without it).
 */
export function reportRoutes(provider: ApiKeyProvider, logger: Logger): Hono<ApiEnv> {
  const limiters = createRateLimiters()
  const app = new Hono<ApiEnv>()
  app.onError(errorHandler({ logger }))
  app.use('*', throttle(limiters, 'api'), apiKeyAuth({ provider, logger }))
  app.get('/reports/whoami', (c) => {
    const key = getApiKey(c)
    return c.json({ data: { key: key.name, scopes: key.scopes } })
  })
  app.delete('/reports/:id', (c) => {
    requireScopes(c, 'reports:delete')
    return c.json({ message: 'Deleted' })
  })
  return app
}
