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
