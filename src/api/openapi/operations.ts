import { UUID_PATTERN } from '../../db/models/columns.ts'
import {
  camelCase,
  capitalize,
  modelName,
  pascalCase,
  spacedWords,
} from '../../db/models/inflect.ts'
import { MAX_BULK_RECORDS } from '../rest/bulk.ts'
import { aggregateOperation } from './aggregate.ts'
import {
  bulkOperation,
  IDEMPOTENCY_IN_PROGRESS,
  idempotencyKeyParameter,
  ifMatchParameter,
  oneOrMany,
  restoreOperation,
} from './bulk-operations.ts'
import { BODY_ERRORS, errorRefs, errorResponse } from './error-responses.ts'
import { eventsOperation, isEventsRoute } from './events-operation.ts'
import { toSchema } from './json-schema.ts'
import { listOperation } from './list-operation.ts'
import { fieldsParameter } from './list-parameters.ts'
import { jsonResponse, type OperationContext, schemaRef } from './operation-context.ts'
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
  const parameters = shape.params.map((name) => pathParameter(name, resource))
  const o: OperationContext = {
    method,
    path,
    shape,
    resources,
    tag,
    resource,
    model,
    singular: spacedWords(model),
    plural: spacedWords(tag),
    base: { tags: [tag], ...(parameters.length > 0 ? { parameters } : {}) },
    recordSchema: resource
      ? { type: 'object', required: ['data'], properties: { data: schemaRef(model) } }
      : undefined,
  }
  if (kind === 'collection' && method === 'get') return listOperation(o)
  if (kind === 'collection' && method === 'post') return createOperation(o)
  if (kind === 'collection' && resource && (method === 'patch' || method === 'delete')) {
    return bulkOperation(method, {
      tag,
      model,
      singular: o.singular,
      plural: o.plural,
      idSchema: pathParameter('id', resource).schema,
      update: resource.update ? toSchema(resource.update, 'input') : undefined,
    })
  }
  if (kind === 'item' && method === 'get') return showOperation(o)
  if (kind === 'item' && (method === 'put' || method === 'patch')) return updateOperation(o)
  if (kind === 'item' && method === 'delete') return deleteOperation(o)
  if (resource?.query && method === 'get' && shape.params.length === 0 && isAggregate(shape))
    return aggregateOperation(tag, `aggregate${pascalCase(tag)}`, o.plural, resource.query)
  if (isEventsRoute(o)) return eventsOperation(o)
  if (resource && method === 'post' && shape.rest.join('/') === 'restore' && kind === 'other') {
    const restore = restoreOperation(tag, model, o.singular)
    return { ...o.base, ...restore, parameters: [...parameters, ...(restore.parameters ?? [])] }
  }
  return customOperation(o)
}

/** `POST /{resource}`: one record, or up to `MAX_BULK_RECORDS` as an array. */
function createOperation(o: OperationContext): OpenApiOperation {
  const { resource, model, singular, plural } = o
  const created = o.recordSchema ?? { type: 'object' }
  return {
    ...o.base,
    operationId: `create${model}`,
    summary: `Create ${singular}`,
    description: `One record as an object, or up to ${MAX_BULK_RECORDS} as an array (all or none), answered as \`{data: [...]}\`.`,
    parameters: [idempotencyKeyParameter],
    ...(resource?.create
      ? {
          requestBody: {
            required: true,
            content: jsonOf(oneOrMany(schemaRef(`Create${model}Request`))),
          },
        }
      : {}),
    responses: {
      '201': jsonResponse(`The created ${singular}, or ${plural}.`, {
        oneOf: [created, resource ? manyRecords(schemaRef(model)) : { type: 'object' }],
      }),
      ...errorRefs('unauthenticated', 'too_many_requests', ...BODY_ERRORS),
      '409': errorResponse(IDEMPOTENCY_IN_PROGRESS),
    },
  }
}

/** `GET /{resource}/{id}`. */
function showOperation(o: OperationContext): OpenApiOperation {
  return {
    ...o.base,
    operationId: `show${o.model}`,
    summary: `Get ${o.singular}`,
    ...(o.resource?.query && {
      parameters: [...(o.base.parameters ?? []), fieldsParameter(o.resource.query, 'the record')],
    }),
    responses: {
      '200': {
        ...jsonResponse(`The ${o.singular}.`, o.recordSchema ?? { type: 'object' }),
        headers: { ETag: ETAG_HEADER },
      },
      ...errorRefs('unauthenticated', 'not_found', 'too_many_requests'),
    },
  }
}

/** `PUT` or `PATCH /{resource}/{id}`. */
function updateOperation(o: OperationContext): OpenApiOperation {
  const { model, singular } = o
  return {
    ...o.base,
    operationId: `${o.method === 'put' ? 'update' : 'patch'}${model}`,
    summary: `Update ${singular}`,
    parameters: [...(o.base.parameters ?? []), ifMatchParameter],
    ...(o.resource?.update
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: schemaRef(`Update${model}Request`) } },
          },
        }
      : {}),
    responses: {
      '200': jsonResponse(`The updated ${singular}.`, o.recordSchema ?? { type: 'object' }),
      ...errorRefs(
        'unauthenticated',
        'not_found',
        'precondition_failed',
        'too_many_requests',
        ...BODY_ERRORS,
      ),
    },
  }
}

/** `DELETE /{resource}/{id}`. */
function deleteOperation(o: OperationContext): OpenApiOperation {
  return {
    ...o.base,
    operationId: `delete${o.model}`,
    summary: `Delete ${o.singular}`,
    parameters: [...(o.base.parameters ?? []), ifMatchParameter],
    responses: {
      '200': jsonResponse(`The ${o.singular} was deleted.`, schemaRef('Deleted')),
      ...errorRefs(
        'unauthenticated',
        'not_found',
        'conflict',
        'precondition_failed',
        'too_many_requests',
      ),
    },
  }
}

/** Any other route: a summary from its path (`Stats post`, `Get posts`), a generic answer. */
function customOperation(o: OperationContext): OpenApiOperation {
  const { shape, method, singular, plural } = o
  const action = shape.rest.length > 0 ? spacedWords(shape.rest.join(' ')) : ''
  const subject = shape.params.length > 0 ? singular : plural
  const summary = action
    ? `${capitalize(action)} ${subject}`
    : `${capitalize(VERBS[method])} ${subject}`
  return {
    ...o.base,
    operationId: camelCase(`${method} ${o.path.replace(/[{}]/g, ' ')}`),
    summary,
    responses: {
      '200': jsonResponse('Success.', { type: 'object' }),
      ...errorRefs('unauthenticated', 'too_many_requests'),
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
        ? { type: 'string', format: 'uuid', pattern: UUID_PATTERN.source }
        : { type: 'string' }
  return { name, in: 'path', required: true, schema }
}

/** The strong ETag `show` sends: `If-Match` on a write names it. */
const ETAG_HEADER = {
  description: 'A strong entity tag of the body: send it back in `If-Match` on a write.',
  schema: { type: 'string' },
}

const jsonOf = (schema: JsonSchema) => ({ 'application/json': { schema } })

const manyRecords = (item: JsonSchema) => ({
  type: 'object',
  required: ['data'],
  properties: { data: { type: 'array', items: item } },
})
