import { pascalCase } from '../../db/models/inflect.ts'
import type { ListQueryDefinition } from '../query/definition.ts'
import { MAX_BULK_RECORDS } from '../rest/bulk.ts'
import { IDEMPOTENCY_HEADER, MAX_IDEMPOTENCY_KEY_LENGTH } from '../rest/idempotency.ts'
import { softDeleteColumn, TRASHED_PARAM } from '../rest/soft-delete.ts'
import { BODY_ERRORS, errorRefs, errorResponse } from './error-responses.ts'
import { schemaRef } from './operation-context.ts'
import type { JsonSchema, OpenApiOperation, OpenApiParameter } from './types.ts'

/** What the bulk operations of a resource are described from. */
export interface BulkContext {
  tag: string
  model: string
  /** `post`, `posts`: for summaries. */
  singular: string
  plural: string
  /** The `{id}` schema of the record routes. */
  idSchema: JsonSchema
  /** The update body's schema (`UpdatePostRequest`), when the resource has one. */
  update: JsonSchema | undefined
}

/** `Idempotency-Key` on POST: a retry with the same key answers the first answer. */
export const idempotencyKeyParameter: OpenApiParameter = {
  name: IDEMPOTENCY_HEADER,
  in: 'header',
  required: false,
  description:
    'Any string of 1 to 255 visible ASCII characters, new for each operation. A retry with the same key (and the same body) answers the first answer (status and body, with `Idempotent-Replayed: true`) for 24 hours without running again; the same key with another body is a 422, a retry while the first runs a 409.',
  schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH },
}

/**
 * `If-Match` on PUT, PATCH and DELETE of one record: the write goes on only while the record
 * is as the client read it (the `ETag` of `GET /{resource}/{id}`), else 412 and nothing changes.
 */
export const ifMatchParameter: OpenApiParameter = {
  name: 'If-Match',
  in: 'header',
  required: false,
  description:
    'The `ETag` the record was read with (`GET` of the record), or `*`. When the record changed since, the answer is 412 and nothing is written. Weak tags never match.',
  schema: { type: 'string' },
}

/** The 409 of a POST that honours `Idempotency-Key`. */
export const IDEMPOTENCY_IN_PROGRESS = 'A request with this Idempotency-Key is still in progress.'

/** A body of one record (`{...}`) or of up to `MAX_BULK_RECORDS` of them (`[{...}, …]`). */
export function oneOrMany(item: JsonSchema): JsonSchema {
  return { oneOf: [item, { type: 'array', items: item, minItems: 1, maxItems: MAX_BULK_RECORDS }] }
}

/**
 * `PATCH /{resource}` (an array of `{id, ...changes}`) and `DELETE /{resource}?ids=1,2,3`:
 * all or none, 404 naming the index of an id no record has.
 */
export function bulkOperation(method: 'patch' | 'delete', context: BulkContext): OpenApiOperation {
  const { tag, model, plural, idSchema } = context
  if (method === 'delete') {
    return {
      tags: [tag],
      operationId: `delete${pascalCase(tag)}`,
      summary: `Delete ${plural} by id`,
      description: `Deletes every record named, in one transaction: all or none. At most ${MAX_BULK_RECORDS} ids.`,
      parameters: [
        {
          name: 'ids',
          in: 'query',
          required: true,
          description: 'The ids, comma-separated (`ids=1,2,3`).',
          style: 'form',
          explode: false,
          schema: { type: 'array', items: idSchema, minItems: 1, maxItems: MAX_BULK_RECORDS },
        },
      ],
      responses: {
        '200': {
          description: `The ${plural} were deleted.`,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['message', 'count'],
                properties: { message: { type: 'string' }, count: { type: 'integer' } },
              },
            },
          },
        },
        ...errorRefs(
          'bad_request',
          'unauthenticated',
          'not_found',
          'conflict',
          'validation_failed',
          'too_many_requests',
        ),
      },
    }
  }
  const changes = withId(context.update, idSchema)
  return {
    tags: [tag],
    operationId: `update${pascalCase(tag)}`,
    summary: `Update ${plural} by id`,
    description: `Applies each item's changes to the record its \`id\` names, in one transaction: all or none. At most ${MAX_BULK_RECORDS} items, each changing at least one field.`,
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: { type: 'array', items: changes, minItems: 1, maxItems: MAX_BULK_RECORDS },
        },
      },
    },
    responses: {
      '200': {
        description: `The updated ${plural}, in the order of the items.`,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['data'],
              properties: { data: { type: 'array', items: schemaRef(model) } },
            },
          },
        },
      },
      ...errorRefs('unauthenticated', 'not_found', 'too_many_requests', ...BODY_ERRORS),
    },
  }
}

/** The update body's schema with the record's `id` added, required. */
function withId(update: JsonSchema | undefined, idSchema: JsonSchema): JsonSchema {
  const base = (update ?? { type: 'object' }) as {
    properties?: Record<string, unknown>
    required?: string[]
  }
  return {
    ...base,
    properties: { id: idSchema, ...(base.properties ?? {}) },
    required: ['id', ...(base.required ?? []).filter((name) => name !== 'id')],
  }
}

/** `filter[trashed]` on the list of a soft-deleting resource (one with a `deleted_at` column). */
export function trashedParameters(query: ListQueryDefinition | undefined): OpenApiParameter[] {
  if (!query || !softDeleteColumn(query.table)) return []
  return [
    {
      name: TRASHED_PARAM,
      in: 'query',
      required: false,
      description:
        'Soft-deleted records are hidden (from lists and aggregates alike); `with` takes them in too, `only` takes only them. Needs the scopes the controller gives `softDeletes` (the write scope as generated, and by default).',
      schema: { type: 'string', enum: ['with', 'only'] },
    },
  ]
}

/** `POST /{resource}/{id}/restore` of a soft-deleting resource. */
export function restoreOperation(tag: string, model: string, singular: string): OpenApiOperation {
  return {
    tags: [tag],
    operationId: `restore${model}`,
    summary: `Restore ${singular}`,
    description: `Takes the ${singular} out of the trash (clears \`deleted_at\`); one not in the trash stays as it is.`,
    parameters: [idempotencyKeyParameter],
    responses: {
      '200': {
        description: `The restored ${singular}.`,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['data'],
              properties: { data: schemaRef(model) },
            },
          },
        },
      },
      ...errorRefs('unauthenticated', 'not_found', 'too_many_requests'),
      '409': errorResponse(IDEMPOTENCY_IN_PROGRESS),
    },
  }
}
