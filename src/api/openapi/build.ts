import { spacedWords } from '../../db/models/inflect.ts'
import { routeScopes } from '../auth/scope-guard.ts'
import { addResourceSchemas, sharedComponents } from './components.ts'
import { describeOperation } from './operations.ts'
import { addScopes, describedRoutes, withDescription } from './route-declarations.ts'
import { classify, METHODS, type Method, toOpenApiPath } from './route-shape.ts'
import type { OpenApiDocument, OpenApiResource, RouteInfo } from './types.ts'

/**
 * Options of `buildOpenApiDocument`: the document's `info` and which routes it covers.
 * `apiDocs` passes its own; an app calls it directly for a document of its own making.
 */
export interface OpenApiOptions {
  /** The document's title, in `info` (the generated docs routes pass `APP_NAME`). */
  title: string
  /** The API's version, in `info` (default `1.0.0`). */
  version?: string
  /** A description of the API, in `info` (Markdown, as OpenAPI allows). */
  description?: string
  /** The API's license, in `info` (`{ name: 'MIT', url }`). */
  license?: { name: string; url?: string }
  /** Routes whose path starts with this are documented (default `/api/`). */
  apiPrefix?: string
  /** Resources with their schemas (the generated module index exports them). */
  resources?: readonly OpenApiResource[]
  /** Paths left out although under the prefix (the docs routes themselves). */
  excludePaths?: readonly string[]
}

/**
 * Builds the OpenAPI 3.0 document of an app from its registered routes:
 * 1. only routes under `apiPrefix` are included; 2. each operation gets a summary
 * (`List posts`, `Create post`, …); 3. `:param` segments become `{param}` path parameters;
 * 4. operations are tagged with their resource name; 5. an API-key security scheme in the
 * `Authorization` header applies to every operation. Request and response schemas come from
 * the resources' zod schemas.
 * @example
 * ```ts
 * const document = buildOpenApiDocument(app.routes, { title: config.appName, version: '1.0.0' })
 * ```
 */
export function buildOpenApiDocument(
  routes: readonly RouteInfo[],
  options: OpenApiOptions,
): OpenApiDocument {
  const prefix = options.apiPrefix ?? '/api/'
  const resources = new Map((options.resources ?? []).map((r) => [r.name, r]))
  const excluded = new Set(options.excludePaths ?? [])
  const doc: OpenApiDocument = {
    openapi: '3.0.3',
    info: {
      title: options.title,
      version: options.version ?? '1.0.0',
      ...(options.description ? { description: options.description } : {}),
      ...(options.license ? { license: options.license } : {}),
    },
    servers: [{ url: '/', description: 'This server' }],
    security: [{ apiKey: [] }],
    tags: [],
    paths: {},
    components: sharedComponents(),
  }
  const tags = new Set<string>()
  const operationIds = new Set<string>()
  for (const resource of resources.values()) addResourceSchemas(doc, resource)

  const described = describedRoutes(routes)
  for (const route of routes) {
    const method = route.method.toLowerCase() as Method
    if (!METHODS.includes(method)) continue
    if (!route.path.startsWith(prefix) || route.path.includes('*')) continue
    const path = toOpenApiPath(route.path)
    if (excluded.has(route.path) || excluded.has(path)) continue
    const own = described.get(`${method} ${route.path}`)
    if (own?.hidden) continue
    const item = doc.paths[path] ?? {}
    doc.paths[path] = item
    const existing = item[method]
    if (existing) {
      addScopes(existing, routeScopes(route.handler))
      continue
    }
    const shape = classify(path, prefix, resources)
    const operation = own
      ? withDescription(describeOperation(method, path, shape, resources), own)
      : describeOperation(method, path, shape, resources)
    operation.operationId = unique(operation.operationId, operationIds)
    addScopes(operation, routeScopes(route.handler))
    item[method] = operation
    for (const tag of operation.tags) tags.add(tag)
  }
  doc.tags = [...tags].sort().map((name) => ({
    name,
    description: resources.get(name)?.description ?? `Operations on ${spacedWords(name)}.`,
  }))
  return doc
}

function unique(id: string, taken: Set<string>): string {
  let candidate = id
  for (let n = 2; taken.has(candidate); n++) candidate = `${id}${n}`
  taken.add(candidate)
  return candidate
}
