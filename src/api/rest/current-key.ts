import { Hono } from 'hono'
import { z } from 'zod'
import type { ApiEnv } from '../auth/api-key-auth.ts'
import { describeRoute } from '../openapi/describe-route.ts'

/** The answer of `GET /api/v1/keys/self`. */
export const CurrentKeyResponse = z.object({
  data: z.object({
    id: z.int(),
    name: z.string(),
    scopes: z.array(z.string()).describe('The key’s scopes; `*` passes every scope check'),
  }),
})

/**
 * `GET /keys/self` under an API group: who the calling key is and what it may do (its id,
 * name and scopes), as Directus' `/permissions/me` or Sanctum's `currentAccessToken()` tell a
 * caller. Any valid key may ask, about itself only; the key itself is never in the answer.
 * The OpenAPI→MCP bridge (`kilnjs mcp --api-url … --api-key …`) reads it to list only the
 * operations the key may call.
 * @example
 * ```ts
 * import { Hono } from 'hono'
 * import type { ApiEnv } from 'kilnjs/api'
 *
 * const v1 = new Hono<ApiEnv>()
 *   .basePath('/api/v1')
 *   .use(apiGuard({ apiKeys, limiters }))
 *   .route('/keys', currentKeyRoutes())
 * ```
 */
export function currentKeyRoutes(): Hono<ApiEnv> {
  return new Hono<ApiEnv>().get(
    '/self',
    describeRoute({
      summary: 'The calling API key',
      description: 'The id, name and scopes of the key that calls: what it may call.',
      tags: ['keys'],
      operationId: 'showCurrentApiKey',
      responses: { 200: { description: 'The calling key.', schema: CurrentKeyResponse } },
    }),
    function currentKey(c) {
      const { id, name, scopes } = c.get('apiKey')
      return c.json({ data: { id, name, scopes: [...scopes] } })
    },
  )
}
