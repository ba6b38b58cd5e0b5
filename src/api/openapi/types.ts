import type { z } from 'zod'
import type { ListQueryDefinition } from '../query/definition.ts'

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

/** The parts of an OpenAPI 3.0 document kiln writes (loosely typed beyond them). */
export interface OpenApiDocument {
  openapi: '3.0.3'
  info: {
    title: string
    version: string
    description?: string
    license?: { name: string; url?: string }
  }
  servers: Array<{ url: string; description?: string }>
  security: Array<Record<string, string[]>>
  tags: Array<{ name: string; description?: string }>
  paths: Record<string, Record<string, OpenApiOperation>>
  components: {
    schemas: Record<string, JsonSchema>
    responses: Record<string, unknown>
    securitySchemes: Record<string, unknown>
  }
}

/**
 * One operation of the document (`paths[path][method]`): guessed from the route and its
 * resource (`List posts`, `createPost`), with what `describeRoute` declared laid over it.
 */
export interface OpenApiOperation {
  /** Unique in the document: `listPosts`, `showPost`, or camelCased from a custom route. */
  operationId: string
  summary: string
  description?: string
  /** The resource's name (or `describeRoute`'s `tags`): how ReDoc groups operations. */
  tags: string[]
  /** The API-key scopes the operation needs (see `scopeGuard`). */
  'x-scopes'?: string[]
  parameters?: OpenApiParameter[]
  /** The JSON body, from the resource's create or update schema or `describeRoute({ body })`. */
  requestBody?: unknown
  /** By status: the success response, and the error responses shared in `components`. */
  responses: Record<string, unknown>
}

/**
 * A parameter of an operation: a `{param}` of the path, or a query parameter of a list
 * (`page`, `filter`, `sort`, …) or of `describeRoute({ query })`.
 */
export interface OpenApiParameter {
  name: string
  in: 'path' | 'query' | 'header'
  required: boolean
  description?: string
  /** `deepObject` for the bracketed list parameters (`filter[title][icontains]=…`). */
  style?: 'form' | 'deepObject'
  explode?: boolean
  schema: JsonSchema
}

/**
 * A schema as it stands in the document, loosely typed: zod schemas converted to JSON Schema
 * (OpenAPI 3.0's dialect; `toOpenApi31` turns them into 2020-12).
 */
export type JsonSchema = Record<string, unknown>
