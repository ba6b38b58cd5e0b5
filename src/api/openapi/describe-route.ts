import type { MiddlewareHandler } from 'hono'
import { findTargetHandler } from 'hono/utils/handler'
import type { z } from 'zod'

/** One documented response of a custom route. */
export interface RouteResponse {
  description: string
  /** The JSON body. Without it the response has no documented content. */
  schema?: z.ZodType
}

/**
 * How a custom route documents itself in the OpenAPI document, instead of the shape kiln
 * would guess from its path. Every field is optional; what is left out keeps its default.
 */
export interface RouteDescription {
  summary?: string
  description?: string
  tags?: string[]
  operationId?: string
  /** Query parameters: the keys of a zod object, with their schemas and optionality. */
  query?: z.ZodObject
  /** The JSON request body. */
  body?: z.ZodType
  /** Responses by status code: `{ 200: { description: 'Pong.', schema: Pong } }`. */
  responses?: Record<number | string, RouteResponse>
  /** Leaves the route out of the document. */
  hidden?: boolean
}

const descriptions = new WeakMap<object, RouteDescription>()

/**
 * A middleware that only carries documentation: put it before a custom route's handler and
 * the OpenAPI document describes the route as it says.
 *
 * ```ts
 * group.get('/ping', describeRoute({ summary: 'Ping', responses: { 200: { description: 'Pong.', schema: Pong } } }), ping)
 * ```
 * @example
 * ```ts
 * app.get('/api/ping', describeRoute({ summary: 'Ping', tags: ['health'] }), (c) => c.json({ pong: true }))
 * ```
 */
export function describeRoute(description: RouteDescription): MiddlewareHandler {
  const documented: MiddlewareHandler = async function documentedRoute(_c, next) {
    await next()
  }
  descriptions.set(documented, description)
  return documented
}

/** The description `describeRoute` attached to a route's handler, if any. */
export function routeDescription(handler: unknown): RouteDescription | undefined {
  // A group with its own error handler wraps each handler when mounted: look through it.
  if (typeof handler !== 'function') return undefined
  return descriptions.get(findTargetHandler(handler as Parameters<typeof findTargetHandler>[0]))
}
