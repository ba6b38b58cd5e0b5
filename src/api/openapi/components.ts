import { errorSchemas, sharedResponses } from './error-responses.ts'
import { toSchema } from './json-schema.ts'
import type { JsonSchema, OpenApiDocument, OpenApiResource } from './types.ts'

/** The document's components before any resource: shared schemas, responses, security. */
export function sharedComponents(): OpenApiDocument['components'] {
  return {
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
  }
}

/** A resource's record and request bodies, as `Post`, `CreatePostRequest`, `UpdatePostRequest`. */
export function addResourceSchemas(doc: OpenApiDocument, resource: OpenApiResource): void {
  const schemas = doc.components.schemas
  schemas[resource.model] = withoutWithheld(
    toSchema(resource.schema, 'output'),
    resource.query?.withheld ?? [],
  )
  if (resource.create)
    schemas[`Create${resource.model}Request`] = toSchema(resource.create, 'input')
  if (resource.update)
    schemas[`Update${resource.model}Request`] = toSchema(resource.update, 'input')
}

/**
 * The record's schema without the columns its list query's `fields` leave out: records never
 * show them (`ListQueryDefinition.record`), so the document does not either.
 */
function withoutWithheld(schema: JsonSchema, withheld: readonly string[]): JsonSchema {
  const properties = schema.properties as Record<string, JsonSchema> | undefined
  if (!properties || !withheld.some((name) => Object.hasOwn(properties, name))) return schema
  const kept = Object.entries(properties).filter(([name]) => !withheld.includes(name))
  const required = (schema.required as string[] | undefined)?.filter(
    (name) => !withheld.includes(name),
  )
  return { ...schema, properties: Object.fromEntries(kept), ...(required && { required }) }
}

/** The bodies every API shares: errors, a deletion, a page's meta and links. */
const sharedSchemas: Record<string, JsonSchema> = {
  ...errorSchemas,
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
