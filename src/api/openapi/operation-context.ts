import type { Method, Shape } from './route-shape.ts'
import type { JsonSchema, OpenApiParameter, OpenApiResource } from './types.ts'

/** What every guessed operation is described from: the route, its resource and their names. */
export interface OperationContext {
  method: Method
  path: string
  shape: Shape
  resources: Map<string, OpenApiResource>
  tag: string
  resource: OpenApiResource | undefined
  /** `BlogPost`, `blog post`, `blog posts`. */
  model: string
  singular: string
  plural: string
  /** The tag and the path parameters every operation of the route starts from. */
  base: { tags: string[]; parameters?: OpenApiParameter[] }
  /** `{ data: Model }`, when the route's resource is declared. */
  recordSchema: JsonSchema | undefined
}

/** `{ $ref: '#/components/schemas/Post' }`. */
export const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` })

/** A response with a JSON body. */
export const jsonResponse = (description: string, schema: JsonSchema) => ({
  description,
  content: { 'application/json': { schema } },
})
