import { getTableName } from 'drizzle-orm'
import {
  camelCase,
  capitalize,
  modelName,
  pascalCase,
  spacedWords,
} from '../../db/models/inflect.ts'
import { relationUnderPolicy } from '../query/definition.ts'
import { MAX_BULK_RECORDS } from '../rest/bulk.ts'
import { aggregateOperation } from './aggregate.ts'
import {
  bulkOperation,
  idempotencyKeyParameter,
  oneOrMany,
  restoreOperation,
  trashedParameters,
} from './bulk-operations.ts'
import { errorRefs, errorResponse } from './error-responses.ts'
import { toSchema } from './json-schema.ts'
import { listQueryParameters } from './list-parameters.ts'
import { isAggregate, type Method, type Shape } from './route-shape.ts'
import type { JsonSchema, OpenApiOperation, OpenApiParameter, OpenApiResource } from './types.ts'

/**
 * The operation kiln guesses for a route from its method and shape: the list, create, show,
 * update and delete of a resource, its bulk, restore and aggregate routes, and a generic
 * operation for anything else.
 */
export function describeOperation(
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
        ...errorRefs('401', '422', '429'),
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
        ...errorRefs('400', '401', '415', '422', '429'),
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
        ...errorRefs('401', '404', '429'),
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
        ...errorRefs('400', '401', '404', '415', '422', '429'),
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
        ...errorRefs('401', '404', '409', '429'),
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
      ...errorRefs('401', '429'),
    },
  }
}

const VERBS: Record<Method, string> = {
  get: 'get',
  post: 'create',
  put: 'update',
  patch: 'update',
  delete: 'delete',
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

const jsonOf = (schema: JsonSchema) => ({ 'application/json': { schema } })

const manyRecords = (item: JsonSchema) => ({
  type: 'object',
  required: ['data'],
  properties: { data: { type: 'array', items: item } },
})
