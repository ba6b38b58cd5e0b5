import { pascalCase } from '../../db/models/inflect.ts'
import { CHANGE_KINDS } from '../realtime/index.ts'
import { END_REASONS } from '../realtime/stream.ts'
import { softDeleteColumn } from '../rest/soft-delete.ts'
import { errorRefs } from './error-responses.ts'
import { fieldsParameter, filterParameter, searchParameters } from './list-parameters.ts'
import { type OperationContext, schemaRef } from './operation-context.ts'
import type { JsonSchema, OpenApiOperation, OpenApiParameter } from './types.ts'

/** The media type of an event stream; the generated client finds the stream by it. */
export const EVENT_STREAM = 'text/event-stream'

/** `GET /{resource}/events`: is this route the resource's stream? */
export function isEventsRoute(o: OperationContext): boolean {
  const { shape, method } = o
  return (
    o.resource !== undefined &&
    method === 'get' &&
    shape.params.length === 0 &&
    shape.rest.length === 1 &&
    shape.rest[0] === 'events'
  )
}

/**
 * `GET /{resource}/events`: the resource's changes as server-sent events, described from the
 * same resource as its list and show. The schema of `text/event-stream` is one event, its `data`
 * parsed (as OpenAPI 3.2's `itemSchema` says of a sequential media type): `created`, `updated`,
 * `restored` (soft delete only) carry the record as a `GET` of it answers, `deleted` its id,
 * `reread` says events were lost, `end` why kiln closed the stream.
 */
export function eventsOperation(o: OperationContext): OpenApiOperation {
  const { tag, resource, model, plural, singular } = o
  const query = resource?.query
  const kinds = CHANGE_KINDS.filter(
    (kind) => kind !== 'restored' || (query !== undefined && softDeleteColumn(query.table)),
  )
  const id = idSchema(o)
  const message = (event: string[], data: JsonSchema, withId: boolean): JsonSchema => ({
    type: 'object',
    required: ['event', 'data', ...(withId ? ['id'] : [])],
    properties: {
      ...(withId
        ? { id: { type: 'string', description: 'The event id, for `Last-Event-ID`.' } }
        : {}),
      event: { type: 'string', enum: event },
      data,
    },
  })
  const record = (properties: JsonSchema) => ({
    type: 'object',
    required: Object.keys(properties),
    properties,
  })
  const parameters: OpenApiParameter[] = [
    ...(query
      ? [filterParameter(query), fieldsParameter(query, 'each event'), ...searchParameters(query)]
      : []),
    {
      name: 'Last-Event-ID',
      in: 'header',
      required: false,
      description:
        'Resume after this event: the retained events after it are sent first, or `reread` ' +
        'when the window no longer reaches back to it.',
      schema: { type: 'string' },
    },
  ]
  return {
    ...o.base,
    operationId: `watch${pascalCase(tag)}`,
    summary: `Watch ${plural}`,
    description:
      `The ${plural} changed from now on, as server-sent events, each ${singular} read as a GET ` +
      'of it answers this key (scope, fields, row filter); `filter[…]` narrows the stream with ' +
      'the list grammar. Heartbeats are comment lines.',
    parameters,
    responses: {
      '200': {
        description: 'An event stream; the schema describes one event, its `data` parsed.',
        content: {
          [EVENT_STREAM]: {
            schema: {
              oneOf: [
                message(
                  kinds.filter((kind) => kind !== 'deleted'),
                  record({ id, data: resource ? schemaRef(model) : { type: 'object' } }),
                  true,
                ),
                message(['deleted'], record({ id }), true),
                message(['reread'], record({ reason: { type: 'string' } }), false),
                message(
                  ['end'],
                  record({ reason: { type: 'string', enum: [...END_REASONS] } }),
                  false,
                ),
              ],
            },
          },
        },
      },
      ...errorRefs('unauthenticated', 'validation_failed', 'too_many_requests'),
    },
  }
}

/** The record's id as its path parameter documents it. */
function idSchema(o: OperationContext): JsonSchema {
  const idType = o.resource?.idType ?? 'integer'
  if (idType === 'integer') return { type: 'integer' }
  return idType === 'uuid' ? { type: 'string', format: 'uuid' } : { type: 'string' }
}
