import type { z } from 'zod'
import { type RouteDescription, routeDescription } from './describe-route.ts'
import { errorRefs } from './error-responses.ts'
import { toSchema } from './json-schema.ts'
import type { OpenApiOperation, OpenApiParameter, RouteInfo } from './types.ts'

/** The descriptions `describeRoute` attached, by `method path` (any handler of the route). */
export function describedRoutes(routes: readonly RouteInfo[]): Map<string, RouteDescription> {
  const found = new Map<string, RouteDescription>()
  for (const route of routes) {
    const description = routeDescription(route.handler)
    const key = `${route.method.toLowerCase()} ${route.path}`
    if (description && !found.has(key)) found.set(key, description)
  }
  return found
}

/** The guessed operation with what the route declared about itself laid over it. */
export function withDescription(guess: OpenApiOperation, own: RouteDescription): OpenApiOperation {
  const operation: OpenApiOperation = { ...guess }
  if (own.summary) operation.summary = own.summary
  if (own.description) operation.description = own.description
  if (own.tags && own.tags.length > 0) operation.tags = own.tags
  if (own.operationId) operation.operationId = own.operationId
  if (own.query) {
    const path = (guess.parameters ?? []).filter((p) => p.in === 'path')
    operation.parameters = [...path, ...queryParameters(own.query)]
  }
  if (own.body) {
    operation.requestBody = {
      required: true,
      content: { 'application/json': { schema: toSchema(own.body, 'input') } },
    }
  }
  if (own.responses) {
    const declared = Object.fromEntries(
      Object.entries(own.responses).map(([status, response]) => [
        status,
        {
          description: response.description,
          ...(response.schema
            ? { content: { 'application/json': { schema: toSchema(response.schema, 'output') } } }
            : {}),
        },
      ]),
    )
    // The guessed success response goes; the shared error responses stay unless redeclared.
    const errors = Object.fromEntries(
      Object.entries(guess.responses).filter(([status]) => !status.startsWith('2')),
    )
    operation.responses = { ...errors, ...declared }
  }
  return operation
}

function queryParameters(query: z.ZodObject): OpenApiParameter[] {
  return Object.entries(query.shape).map(([name, schema]) => {
    const field = schema as z.ZodType
    const json = toSchema(field, 'input')
    const { description, ...rest } = json
    return {
      name,
      in: 'query',
      required: !field.safeParse(undefined).success,
      ...(typeof description === 'string' ? { description } : {}),
      schema: rest,
    }
  })
}

/**
 * Writes the scopes a `scopeGuard` requires into the operation: `x-scopes` for tools, a
 * sentence in its description for readers, and the 403 answered without them. (OpenAPI 3.0
 * allows scope lists in `security` only for OAuth2 schemes, not for an API key.)
 */
export function addScopes(
  operation: OpenApiOperation,
  scopes: readonly string[] | undefined,
): void {
  if (!scopes || scopes.length === 0) return
  const all = [...new Set([...(operation['x-scopes'] ?? []), ...scopes])]
  operation['x-scopes'] = all
  const list = all.map((scope) => `\`${scope}\``).join(', ')
  const sentence = `Needs an API key with the scope${all.length > 1 ? 's' : ''} ${list} (a key with \`*\` has every scope).`
  // The route's own description (describeRoute) stays; the scope sentence follows it.
  const own = (operation.description ?? '').replace(/\s*Needs an API key with the scope.*$/s, '')
  operation.description = own ? `${own}\n\n${sentence}` : sentence
  Object.assign(operation.responses, errorRefs('forbidden'))
}
