import type { ListQueryDefinition, QueryField } from '../query/definition.ts'
import { trashedParameters } from './bulk-operations.ts'
import { errorRefs } from './error-responses.ts'
import { filterParameter, searchParameters, valueSchema } from './list-parameters.ts'
import type { JsonSchema, OpenApiOperation, OpenApiParameter } from './types.ts'

/**
 * `GET /api/v1/{resource}/aggregate`: its parameters from the resource's allow-lists (each
 * function's fields and `group_by` as enums, the list's `filter` and `search`) and the shape of
 * its groups.
 */
export function aggregateOperation(
  tag: string,
  operationId: string,
  plural: string,
  definition: ListQueryDefinition,
): OpenApiOperation {
  return {
    tags: [tag],
    operationId,
    summary: `Aggregate ${plural}`,
    description:
      'count, sum, avg, min and max over the records the filters select, per group of ' +
      '`group_by`. Sensitive fields are never offered.',
    parameters: aggregateParameters(definition),
    responses: {
      '200': {
        description: `The groups of ${plural}.`,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['data', 'meta'],
              properties: {
                data: { type: 'array', items: aggregateGroupSchema(definition) },
                meta: {
                  type: 'object',
                  required: ['groups', 'truncated'],
                  properties: { groups: { type: 'integer' }, truncated: { type: 'boolean' } },
                },
              },
            },
          },
        },
      },
      ...errorRefs('unauthenticated', 'validation_failed', 'too_many_requests', 'query_timeout'),
    },
  }
}

/** The aggregate's query: `count`, each function and `group_by`, the list's filters. */
function aggregateParameters(definition: ListQueryDefinition): OpenApiParameter[] {
  const { aggregates, limits } = definition
  const commaList = (fields: Map<string, QueryField>, description: string, max?: number) => ({
    in: 'query' as const,
    required: false,
    style: 'form' as const,
    explode: false,
    description,
    schema: {
      type: 'array',
      items: { type: 'string', enum: [...fields.keys()] },
      uniqueItems: true,
      ...(max === undefined ? {} : { maxItems: max }),
    },
  })
  const parameters: OpenApiParameter[] = [
    {
      name: 'count',
      in: 'query',
      required: false,
      description: '`*`: the number of records of each group (the default without any function).',
      schema: { type: 'string', enum: ['*'] },
    },
  ]
  for (const fn of ['sum', 'avg', 'min', 'max'] as const) {
    if (aggregates[fn].size > 0)
      parameters.push({ name: fn, ...commaList(aggregates[fn], `Fields whose ${fn} to compute.`) })
  }
  if (aggregates.groupBy.size > 0) {
    parameters.push({
      name: 'group_by',
      ...commaList(
        aggregates.groupBy,
        `One group per distinct value of these fields (at most ${limits.maxGroupBy}), ordered ` +
          `by them, NULL last; at most ${limits.maxGroups} groups.`,
        limits.maxGroupBy,
      ),
    })
  }
  parameters.push(filterParameter(definition))
  parameters.push(...searchParameters(definition))
  parameters.push(...trashedParameters(definition))
  return parameters
}

/** One group of the answer: its `group` values and each function's results, by field. */
function aggregateGroupSchema({ aggregates }: ListQueryDefinition): JsonSchema {
  const byField = (fields: Map<string, QueryField>, schema: (field: QueryField) => JsonSchema) => ({
    type: 'object',
    properties: Object.fromEntries(
      [...fields.values()].map((field) => [field.name, { ...schema(field), nullable: true }]),
    ),
  })
  // Sums and averages are numbers, exact strings for decimal and bigint fields.
  const numeric = (field: QueryField): JsonSchema =>
    field.kind === 'decimal' || field.kind === 'bigint' ? { type: 'string' } : { type: 'number' }
  return {
    type: 'object',
    required: ['group'],
    properties: {
      group: byField(aggregates.groupBy, valueSchema),
      count: { type: 'integer' },
      sum: byField(aggregates.sum, numeric),
      avg: byField(aggregates.avg, numeric),
      min: byField(aggregates.min, valueSchema),
      max: byField(aggregates.max, valueSchema),
    },
  }
}
