import { eq } from 'drizzle-orm'
import { z } from 'zod'
import { type AggregateEnvelope, runAggregateQuery } from '../../api/index.ts'
import { ValidationError } from '../../core/errors.ts'
import type { Database } from '../../db/index.ts'
import { READ_ONLY_TOOL_ANNOTATIONS } from '../annotations.ts'
import { ToolError } from '../tool-error.ts'
import {
  type AccessPolicy,
  authorizeCall,
  type McpCaller,
  type ModelAccess,
  policyCaller,
} from './access.ts'
import { drizzleColumn, tenantOf } from './crud-input.ts'
import {
  checkFilterFields,
  type FilterValue,
  filterParams,
  listQueryOf,
  softDeleteOfModel,
} from './crud-list.ts'
import { filtersSchema } from './filter-schema.ts'
import type { McpModel } from './models.ts'

export interface AggregateInput {
  model: string
  filters?: Record<string, FilterValue | Array<Record<string, FilterValue>>> | undefined
  search?: string | undefined
  /** Count the records of each group (the default without any function). */
  count?: boolean | undefined
  sum?: string[] | undefined
  avg?: string[] | undefined
  min?: string[] | undefined
  max?: string[] | undefined
  group_by?: string[] | undefined
}

export type AggregateResult = AggregateEnvelope

/** What `crud_aggregate` says of itself in `tools/list`. */
export const aggregateTool = {
  title: 'Aggregate records',
  description:
    'count, sum, avg, min and max of a model, per group of group_by fields, over the records ' +
    'the filters (the crud_list grammar) select: {"model": "posts", "count": true, "sum": ' +
    '["token_count"], "group_by": ["author_id"]}. Returns {data: [{group, count, sum, avg, ' +
    'min, max}], meta: {groups, truncated}}, groups ordered by their fields. sum and avg take ' +
    'numeric fields, min, max and group_by sortable ones; credential fields never.',
  annotations: READ_ONLY_TOOL_ANNOTATIONS,
}

/** `crud_aggregate`'s arguments. */
export function aggregateSchema(model: z.ZodString) {
  const fields = (what: string) => z.array(z.string()).optional().describe(what)
  return z.object({
    model,
    filters: filtersSchema(),
    search: z
      .string()
      .optional()
      .describe('Records whose text fields contain the term (case-insensitive)'),
    count: z
      .boolean()
      .optional()
      .describe('Count the records of each group (the default when no function is asked)'),
    sum: fields('Numeric fields to sum'),
    avg: fields('Numeric fields to average'),
    min: fields('Fields whose smallest value to give'),
    max: fields('Fields whose largest value to give'),
    group_by: fields('One group per distinct value of these fields (at most 3)'),
  })
}

/**
 * `crud_aggregate` after `checkCall` with crud_list's grant: the REST aggregate on the model as
 * `crud_list` sees it (the caller's readable columns and rows), within its tenant.
 */
export async function aggregateRecords(
  database: Database,
  policy: AccessPolicy,
  model: McpModel,
  access: ModelAccess,
  caller: McpCaller | undefined,
  input: AggregateInput,
): Promise<AggregateResult> {
  const { definition } = listQueryOf(policy, model, access)
  checkFilterFields(definition, model, input.filters)
  await authorizeCall(policy, model, { caller, action: 'crud_list' })
  const tenant = tenantOf(model, access, caller)
  const scope = tenant && {
    where: eq(drizzleColumn(model, tenant.column), tenant.value),
    key: `tenant:${String(tenant.value)}`,
  }
  const url = new URL('http://localhost/')
  const params = url.searchParams
  filterParams(params, input.filters)
  if (input.search !== undefined) params.set('search', input.search)
  if (input.count) params.set('count', '*')
  for (const fn of ['sum', 'avg', 'min', 'max', 'group_by'] as const) {
    const names = input[fn]
    if (names && names.length > 0) params.set(fn, names.join(','))
  }
  try {
    // The model's row filter sees the caller and its trash stays out, as crud_list's: the
    // same rows are counted.
    return await runAggregateQuery(definition, url, {
      db: database.db,
      scope,
      caller: policyCaller(caller),
      softDelete: softDeleteOfModel(model),
    })
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error
    const problems = Object.entries(error.errors).map(
      ([param, messages]) => `${param}: ${messages.join(', ')}`,
    )
    throw new ToolError(`Invalid aggregate arguments for ${model.resource}: ${problems.join('; ')}`)
  }
}
