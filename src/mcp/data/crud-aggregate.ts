import { eq } from 'drizzle-orm'
import { type AggregateEnvelope, runAggregateQuery } from '../../api/index.ts'
import type { Database } from '../../db/index.ts'
import {
  type AccessPolicy,
  authorizeCall,
  type McpCaller,
  type ModelAccess,
  policyCaller,
} from './access.ts'
import { checkFilterFields, type FilterValue, filterParams } from './crud-arguments.ts'
import { drizzleColumn, tenantOf } from './crud-input.ts'
import { invalidArguments, listQueryOf, softDeleteOfModel } from './crud-list.ts'
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
    invalidArguments(error, 'aggregate', model)
  }
}
