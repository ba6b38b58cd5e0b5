import { getTableName } from 'drizzle-orm'
import { z } from 'zod'
import {
  camelCase,
  capitalize,
  modelName,
  pascalCase,
  spacedWords,
} from '../../db/models/inflect.ts'
import { routeScopes } from '../auth/scope-guard.ts'
import { type ListQueryDefinition, relationUnderPolicy } from '../query/definition.ts'
import { MAX_BULK_RECORDS } from '../rest/bulk.ts'
import { aggregateOperation } from './aggregate.ts'
import {
  bulkOperation,
  idempotencyKeyParameter,
  oneOrMany,
  restoreOperation,
  trashedParameters,
} from './bulk-operations.ts'
import { type RouteDescription, routeDescription } from './describe-route.ts'
import { listQueryParameters } from './list-parameters.ts'
import type { JsonSchema, OpenApiDocument, OpenApiOperation, OpenApiParameter } from './types.ts'

/** A resource of the API, as the generated module index describes it. */
export interface OpenApiResource {
  /** Plural, lowercase path segment and tag: `posts`, `blog_posts`. */
  name: string
  /** Model name, singular PascalCase: `BlogPost`. Names the schemas and summaries. */
  model: string
  /** The record as the API returns it (excluded fields absent). */
  schema: z.ZodType
  /** Body of `POST /{resource}`. */
  create?: z.ZodType
  /** Body of `PUT /{resource}/{id}`. */
  update?: z.ZodType
  /** JSON type of `{id}` (default integer): the primary key's type. */
  idType?: 'integer' | 'string' | 'uuid'
  description?: string
  /** The list's query allow-lists (`defineListQuery`): documents filter, sort, fields, include… */
  query?: ListQueryDefinition
}

/** A registered route: what Hono's `app.routes` lists. */
export interface RouteInfo {
  method: string
  path: string
  /**
   * The handler or middleware; one from `describeRoute` documents the route, a `scopeGuard`
   * the scopes the operation needs.
   */
  handler?: unknown
}

export interface OpenApiOptions {
  title: string
  version?: string
  description?: string
  /** The API's license, in `info` (`{ name: 'MIT', url }`). */
  license?: { name: string; url?: string }
  /** Routes whose path starts with this are documented (default `/api/`). */
  apiPrefix?: string
  resources?: readonly OpenApiResource[]
  /** Paths left out although under the prefix (the docs routes themselves). */
  excludePaths?: readonly string[]
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const
type Method = (typeof METHODS)[number]

/**
 * Builds the OpenAPI 3.0 document of an app from its registered routes:
 * 1. only routes under `apiPrefix` are included; 2. each operation gets a summary
 * (`List posts`, `Create post`, …); 3. `:param` segments become `{param}` path parameters;
 * 4. operations are tagged with their resource name; 5. an API-key security scheme in the
 * `Authorization` header applies to every operation. Request and response schemas come from
 * the resources' zod schemas.
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
    components: {
      schemas: { ...sharedSchemas },
      responses: { ...sharedResponses },
      securitySchemes: {
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: 'An API key sent as `Authorization: Bearer <API_KEY>`.',
        },
      },
    },
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

/** `/api/v1/posts/:id{[0-9]+}` → `/api/v1/posts/{id}`. */
export function toOpenApiPath(path: string): string {
  return path
    .split('/')
    .map((segment) => {
      const match = /^:([A-Za-z0-9_]+)/.exec(segment)
      return match ? `{${match[1]}}` : segment
    })
    .join('/')
}

interface Shape {
  tag: string
  resource: OpenApiResource | undefined
  kind: 'collection' | 'item' | 'other'
  /** Static segments after the resource (custom routes). */
  rest: string[]
  params: string[]
}

function classify(path: string, prefix: string, resources: Map<string, OpenApiResource>): Shape {
  const segments = path.slice(prefix.length).split('/').filter(Boolean)
  if (segments[0] && /^v[0-9]+$/.test(segments[0])) segments.shift()
  const tag = segments[0] && !isParam(segments[0]) ? segments[0] : 'api'
  const resource = resources.get(tag)
  const params = segments.filter(isParam).map((s) => s.slice(1, -1))
  const rest = segments.slice(1).filter((s) => !isParam(s))
  // Only a declared resource gets the CRUD shapes (a paginated list, `{data}` records): a
  // custom `GET /api/v2/ping` is not a list because it has one segment.
  let kind: Shape['kind'] = 'other'
  if (resource && segments.length === 1) kind = 'collection'
  else if (resource && segments.length === 2 && isParam(segments[1]!)) kind = 'item'
  return { tag, resource, kind, rest, params }
}

/** `GET /api/v1/{resource}/aggregate`, the route the generated controllers add. */
function isAggregate(shape: Shape): boolean {
  return shape.rest.length === 1 && shape.rest[0] === 'aggregate'
}

function isParam(segment: string): boolean {
  return segment.startsWith('{') && segment.endsWith('}')
}

function describeOperation(
  method: Method,
  path: string,
  shape: Shape,
  resources: Map<string, OpenApiResource>,
): OpenApiOperation {
  const { tag, resource, kind } = shape
  const model = resource?.model ?? modelName(tag)
  const singular = spacedWords(model)
  const plural = spacedWords(tag)
  const parameters = shape.params.map((name) => pathParameter(name, resource))
  const base = { tags: [tag], ...(parameters.length > 0 ? { parameters } : {}) }
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
  const response = (description: string, schema: JsonSchema) => ({
    description,
    content: { 'application/json': { schema } },
  })
  const errors = (...codes: string[]) =>
    Object.fromEntries(codes.map((code) => [code, { $ref: `#/components/responses/${code}` }]))
  const recordSchema = resource
    ? { type: 'object', required: ['data'], properties: { data: ref(model) } }
    : undefined
  const body = (schemaName: string) => ({
    required: true,
    content: { 'application/json': { schema: ref(schemaName) } },
  })

  if (kind === 'collection' && method === 'get') {
    return {
      ...base,
      operationId: `list${pascalCase(tag)}`,
      summary: `List ${plural}`,
      parameters: resource?.query
        ? [
            ...pageParameters,
            ...listQueryParameters(resource.query),
            ...trashedParameters(resource.query),
          ]
        : pageParameters,
      responses: {
        '200': response(`A page of ${plural}.`, {
          type: 'object',
          required: ['data', 'meta', 'links'],
          properties: {
            data: { type: 'array', items: listItemSchema(resource, model, resources) },
            // anyOf: a page's and a cursor page's links share their optional fields.
            meta: resource?.query
              ? { anyOf: [ref('PageMeta'), ref('CursorPageMeta')] }
              : ref('PageMeta'),
            links: resource?.query
              ? { anyOf: [ref('PageLinks'), ref('CursorPageLinks')] }
              : ref('PageLinks'),
          },
        }),
        ...errors('401', '422', '429'),
      },
    }
  }
  if (kind === 'collection' && method === 'post') {
    const created = recordSchema ?? { type: 'object' }
    return {
      ...base,
      operationId: `create${model}`,
      summary: `Create ${singular}`,
      description: `One record as an object, or up to ${MAX_BULK_RECORDS} as an array (all or none), answered as \`{data: [...]}\`.`,
      parameters: [idempotencyKeyParameter],
      ...(resource?.create
        ? {
            requestBody: {
              required: true,
              content: jsonOf(oneOrMany(ref(`Create${model}Request`))),
            },
          }
        : {}),
      responses: {
        '201': response(`The created ${singular}, or ${plural}.`, {
          oneOf: [created, resource ? manyRecords(ref(model)) : { type: 'object' }],
        }),
        ...errors('400', '401', '415', '422', '429'),
        '409': errorResponse('A request with this Idempotency-Key is still in progress.'),
      },
    }
  }
  if (kind === 'collection' && resource && (method === 'patch' || method === 'delete')) {
    return bulkOperation(method, {
      tag,
      model,
      singular,
      plural,
      idSchema: pathParameter('id', resource).schema,
      update: resource.update ? toSchema(resource.update, 'input') : undefined,
    })
  }
  if (kind === 'item' && method === 'get') {
    return {
      ...base,
      operationId: `show${model}`,
      summary: `Get ${singular}`,
      responses: {
        '200': response(`The ${singular}.`, recordSchema ?? { type: 'object' }),
        ...errors('401', '404', '429'),
      },
    }
  }
  if (kind === 'item' && (method === 'put' || method === 'patch')) {
    return {
      ...base,
      operationId: `${method === 'put' ? 'update' : 'patch'}${model}`,
      summary: `Update ${singular}`,
      ...(resource?.update ? { requestBody: body(`Update${model}Request`) } : {}),
      responses: {
        '200': response(`The updated ${singular}.`, recordSchema ?? { type: 'object' }),
        ...errors('400', '401', '404', '415', '422', '429'),
      },
    }
  }
  if (kind === 'item' && method === 'delete') {
    return {
      ...base,
      operationId: `delete${model}`,
      summary: `Delete ${singular}`,
      responses: {
        '200': response(`The ${singular} was deleted.`, ref('Deleted')),
        ...errors('401', '404', '409', '429'),
      },
    }
  }
  if (resource?.query && method === 'get' && shape.params.length === 0 && isAggregate(shape))
    return aggregateOperation(tag, `aggregate${pascalCase(tag)}`, plural, resource.query)
  if (resource && method === 'post' && shape.rest.join('/') === 'restore' && kind === 'other') {
    return { ...base, ...restoreOperation(tag, model, singular) }
  }
  const action = shape.rest.length > 0 ? spacedWords(shape.rest.join(' ')) : ''
  const subject = shape.params.length > 0 ? singular : plural
  const summary = action
    ? `${capitalize(action)} ${subject}`
    : `${capitalize(VERBS[method])} ${subject}`
  return {
    ...base,
    operationId: camelCase(`${method} ${path.replace(/[{}]/g, ' ')}`),
    summary,
    responses: {
      '200': response('Success.', { type: 'object' }),
      ...errors('401', '429'),
    },
  }
}

/** The descriptions `describeRoute` attached, by `method path` (any handler of the route). */
function describedRoutes(routes: readonly RouteInfo[]): Map<string, RouteDescription> {
  const found = new Map<string, RouteDescription>()
  for (const route of routes) {
    const description = routeDescription(route.handler)
    const key = `${route.method.toLowerCase()} ${route.path}`
    if (description && !found.has(key)) found.set(key, description)
  }
  return found
}

/** The guessed operation with what the route declared about itself laid over it. */
function withDescription(guess: OpenApiOperation, own: RouteDescription): OpenApiOperation {
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

const VERBS: Record<Method, string> = {
  get: 'get',
  post: 'create',
  put: 'update',
  patch: 'update',
  delete: 'delete',
}

/**
 * Writes the scopes a `scopeGuard` requires into the operation: `x-scopes` for tools, a
 * sentence in its description for readers, and the 403 answered without them. (OpenAPI 3.0
 * allows scope lists in `security` only for OAuth2 schemes, not for an API key.)
 */
function addScopes(operation: OpenApiOperation, scopes: readonly string[] | undefined): void {
  if (!scopes || scopes.length === 0) return
  const all = [...new Set([...(operation['x-scopes'] ?? []), ...scopes])]
  operation['x-scopes'] = all
  const list = all.map((scope) => `\`${scope}\``).join(', ')
  const sentence = `Needs an API key with the scope${all.length > 1 ? 's' : ''} ${list} (a key with \`*\` has every scope).`
  // The route's own description (describeRoute) stays; the scope sentence follows it.
  const own = (operation.description ?? '').replace(/\s*Needs an API key with the scope.*$/s, '')
  operation.description = own ? `${own}\n\n${sentence}` : sentence
  operation.responses['403'] = { $ref: '#/components/responses/403' }
}

function pathParameter(name: string, resource: OpenApiResource | undefined): OpenApiParameter {
  const idType = name === 'id' ? (resource?.idType ?? 'integer') : 'string'
  const schema =
    idType === 'integer'
      ? { type: 'integer', minimum: 1 }
      : idType === 'uuid'
        ? { type: 'string', format: 'uuid' }
        : { type: 'string' }
  return { name, in: 'path', required: true, schema }
}

/** A record of a list: the resource, plus the relations `include=` may attach. */
function listItemSchema(
  resource: OpenApiResource | undefined,
  model: string,
  resources: Map<string, OpenApiResource>,
): JsonSchema {
  if (!resource) return { type: 'object' }
  const ref = { $ref: `#/components/schemas/${model}` }
  const relations = [...(resource.query?.relations.values() ?? [])]
  if (relations.length === 0) return ref
  const properties = Object.fromEntries(
    relations.map((relation) => {
      const related = resources.get(getTableName(relation.table))
      const item = related ? { $ref: `#/components/schemas/${related.model}` } : { type: 'object' }
      const { readScope } = relationUnderPolicy(relation)
      const needs = readScope === undefined ? '' : ` (the key needs ${readScope})`
      const description = `With \`include=${relation.name}\`${needs}.`
      return [
        relation.name,
        relation.kind === 'has-many'
          ? { type: 'array', items: item, maxItems: relation.limit, description }
          : { type: 'object', allOf: [item], nullable: true, description },
      ]
    }),
  )
  return { allOf: [ref, { type: 'object', properties }] }
}

const pageParameters: OpenApiParameter[] = [
  {
    name: 'page',
    in: 'query',
    required: false,
    description: 'Page number, from 1.',
    schema: { type: 'integer', minimum: 1, default: 1 },
  },
  {
    name: 'per_page',
    in: 'query',
    required: false,
    description: 'Records per page; values above 100 are lowered to 100.',
    schema: { type: 'integer', minimum: 1, default: 15 },
  },
]

function addResourceSchemas(doc: OpenApiDocument, resource: OpenApiResource): void {
  const schemas = doc.components.schemas
  schemas[resource.model] = toSchema(resource.schema, 'output')
  if (resource.create)
    schemas[`Create${resource.model}Request`] = toSchema(resource.create, 'input')
  if (resource.update)
    schemas[`Update${resource.model}Request`] = toSchema(resource.update, 'input')
}

/** A zod schema as an OpenAPI 3.0 schema object (requests by their input side). */
export function toSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, {
    target: 'openapi-3.0',
    io,
    unrepresentable: 'any',
  }) as JsonSchema
  return typedNullables(rest) as JsonSchema
}

/**
 * OpenAPI 3.0 allows `nullable` only beside a `type`, but zod writes `{ anyOf, nullable }` for
 * a nullable union and `{ nullable }` for a nullable unknown. Moves `nullable` into each branch
 * of the union, and drops it where any value (null included) is already allowed.
 */
function typedNullables(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(typedNullables)
  if (node === null || typeof node !== 'object') return node
  const out: JsonSchema = {}
  for (const [key, value] of Object.entries(node)) out[key] = typedNullables(value)
  if (out.nullable !== true || 'type' in out) return out
  const { nullable: _nullable, ...rest } = out
  const branches = rest.anyOf ?? rest.oneOf
  if (!Array.isArray(branches)) return rest
  const key = rest.anyOf ? 'anyOf' : 'oneOf'
  return { ...rest, [key]: branches.map((branch) => nullableBranch(branch)) }
}

function nullableBranch(branch: unknown): unknown {
  if (branch === null || typeof branch !== 'object') return branch
  const schema = branch as JsonSchema
  if ('type' in schema) return { ...schema, nullable: true }
  return typedNullables({ ...schema, nullable: true })
}

const sharedSchemas: Record<string, JsonSchema> = {
  Error: {
    type: 'object',
    required: ['error'],
    properties: { error: { type: 'string' } },
  },
  ValidationError: {
    type: 'object',
    required: ['error', 'errors'],
    properties: {
      error: { type: 'string', example: 'Validation failed' },
      errors: {
        type: 'object',
        description: 'Messages per field.',
        additionalProperties: { type: 'array', items: { type: 'string' } },
      },
    },
  },
  Deleted: {
    type: 'object',
    required: ['message'],
    properties: { message: { type: 'string', enum: ['Deleted'] } },
  },
  PageMeta: {
    type: 'object',
    required: ['current_page', 'per_page', 'total', 'last_page', 'from', 'to'],
    properties: {
      ...Object.fromEntries(
        ['current_page', 'per_page', 'from', 'to'].map((k) => [k, { type: 'integer' }]),
      ),
      total: { type: 'integer', nullable: true, description: 'null with `count=none`.' },
      last_page: { type: 'integer', nullable: true, description: 'null with `count=none`.' },
      count: {
        type: 'string',
        enum: ['exact', 'estimated', 'none'],
        description: 'What `total` is; present when `count=` was given.',
      },
    },
  },
  PageLinks: {
    type: 'object',
    required: ['first', 'last', 'prev', 'next'],
    properties: {
      first: { type: 'string', example: '?page=1' },
      last: { type: 'string', nullable: true },
      prev: { type: 'string', nullable: true },
      next: { type: 'string', nullable: true },
    },
  },
  CursorPageMeta: {
    type: 'object',
    description: 'The meta of a cursor page (`cursor=` given).',
    required: ['per_page', 'total', 'count', 'next_cursor', 'prev_cursor'],
    properties: {
      per_page: { type: 'integer' },
      total: { type: 'integer', nullable: true },
      count: { type: 'string', enum: ['exact', 'estimated', 'none'] },
      next_cursor: { type: 'string', nullable: true },
      prev_cursor: { type: 'string', nullable: true },
    },
  },
  CursorPageLinks: {
    type: 'object',
    required: ['first', 'prev', 'next'],
    properties: {
      first: { type: 'string', example: '?cursor=' },
      prev: { type: 'string', nullable: true },
      next: { type: 'string', nullable: true },
    },
  },
}

const jsonOf = (schema: JsonSchema) => ({ 'application/json': { schema } })

const manyRecords = (item: JsonSchema) => ({
  type: 'object',
  required: ['data'],
  properties: { data: { type: 'array', items: item } },
})

const errorResponse = (description: string, schema = 'Error') => ({
  description,
  content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } },
})

const sharedResponses: Record<string, unknown> = {
  '400': errorResponse('Malformed JSON body.'),
  '401': errorResponse('Missing, unknown, revoked or expired API key.'),
  '403': errorResponse('The API key lacks a scope this operation needs.'),
  '404': errorResponse('No record with this identifier.'),
  '409': errorResponse('The record is still referenced by other records.'),
  '415': errorResponse('The body is not application/json.'),
  '422': errorResponse('The request failed validation.', 'ValidationError'),
  '429': errorResponse('Too many requests; retry after the `Retry-After` seconds.'),
}

function unique(id: string, taken: Set<string>): string {
  let candidate = id
  for (let n = 2; taken.has(candidate); n++) candidate = `${id}${n}`
  taken.add(candidate)
  return candidate
}
