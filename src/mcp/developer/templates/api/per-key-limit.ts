import { Hono } from 'hono'
import { type ApiEnv, type ApiKeyProvider, apiKeyAuth } from 'kilnjs/api'
import { createRateLimiters, perIp, type Redis, throttle } from 'kilnjs/core'

/**
 * A limiter of your own: 600 requests per minute per API key (`key:<id>`) for an export
 * endpoint, counted in Redis so every instance shares the limit. Authenticate first so the
 * limiter can see the key.
 */
export function exportRoutes(provider: ApiKeyProvider, redis: Redis | undefined): Hono<ApiEnv> {
  const limiters = createRateLimiters({
    redis,
    limiters: {
      exports: (request) =>
        request.apiKey ? { key: `key:${request.apiKey.id}`, points: 600 } : perIp(request, 60),
    },
  })
  const app = new Hono<ApiEnv>()
  app.use('/exports/*', apiKeyAuth({ provider }), throttle(limiters, 'exports'))
  app.get('/exports/posts.csv', (c) => c.body('id,title\n', 200, { 'Content-Type': 'text/csv' }))
  return app
}
