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

export interface OpenApiOperation {
  operationId: string
  summary: string
  description?: string
  tags: string[]
  /** The API-key scopes the operation needs (see `scopeGuard`). */
  'x-scopes'?: string[]
  parameters?: OpenApiParameter[]
  requestBody?: unknown
  responses: Record<string, unknown>
}

export interface OpenApiParameter {
  name: string
  in: 'path' | 'query' | 'header'
  required: boolean
  description?: string
  style?: 'form' | 'deepObject'
  explode?: boolean
  schema: JsonSchema
}

export type JsonSchema = Record<string, unknown>
