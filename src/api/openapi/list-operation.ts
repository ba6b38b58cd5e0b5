import { getTableName } from 'drizzle-orm'
import { pascalCase } from '../../db/models/inflect.ts'
import { relationUnderPolicy } from '../query/definition.ts'
import { trashedParameters } from './bulk-operations.ts'
import { errorRefs } from './error-responses.ts'
import { listQueryParameters } from './list-parameters.ts'
import { jsonResponse, type OperationContext, schemaRef } from './operation-context.ts'
import type { JsonSchema, OpenApiOperation, OpenApiParameter, OpenApiResource } from './types.ts'

/** `GET /{resource}`: a page of records, with the list's allow-lists as its parameters. */
export function listOperation(o: OperationContext): OpenApiOperation {
  const { tag, resource, model, plural } = o
  return {
    ...o.base,
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
      '200': jsonResponse(`A page of ${plural}.`, {
        type: 'object',
        required: ['data', 'meta', 'links'],
        properties: {
          data: { type: 'array', items: listItemSchema(resource, model, o.resources) },
          // anyOf: a page's and a cursor page's links share their optional fields.
          meta: resource?.query
            ? { anyOf: [schemaRef('PageMeta'), schemaRef('CursorPageMeta')] }
            : schemaRef('PageMeta'),
          links: resource?.query
            ? { anyOf: [schemaRef('PageLinks'), schemaRef('CursorPageLinks')] }
            : schemaRef('PageLinks'),
        },
      }),
      ...errorRefs('unauthenticated', 'validation_failed', 'too_many_requests', 'query_timeout'),
    },
  }
}

/** A record of a list: the resource, plus the relations `include=` may attach. */
function listItemSchema(
  resource: OpenApiResource | undefined,
  model: string,
  resources: Map<string, OpenApiResource>,
): JsonSchema {
  if (!resource) return { type: 'object' }
  const ref = schemaRef(model)
  const relations = [...(resource.query?.relations.values() ?? [])]
  if (relations.length === 0) return ref
  const properties = Object.fromEntries(
    relations.map((relation) => {
      const related = resources.get(getTableName(relation.table))
      const item = related ? schemaRef(related.model) : { type: 'object' }
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
