import { eq } from 'drizzle-orm'
import {
  createRecordCounter,
  defineListQuery,
  foreignKeyRelations,
  type ListQueryDefinition,
  runListQuery,
} from '../api/index.ts'
import { ValidationError } from '../core/errors.ts'
import type { Database } from '../db/index.ts'
import {
  drizzleColumn,
  type JsonRecord,
  type McpCaller,
  resolveModel,
  tenantOf,
} from './crud-input.ts'
import { isSensitiveField, type McpModel, type McpModelSource } from './models.ts'
import { ToolError } from './tool-error.ts'

export type FilterScalar = string | number | boolean | null
/** `value` (equality, `null` for IS NULL) or `{ operator: value }`; lists for in / not_in / between. */
export type FilterValue = FilterScalar | Record<string, FilterScalar | FilterScalar[]>

export interface ListInput {
  model: string
  filters?: Record<string, FilterValue> | undefined
  sort?: string | undefined
  fields?: string[] | undefined
  include?: string[] | undefined
  search?: string | undefined
  /** '' for the first cursor page, then a `next_cursor` / `prev_cursor`. */
  cursor?: string | undefined
  count?: 'exact' | 'estimated' | 'none' | undefined
  page?: number | undefined
  per_page?: number | undefined
}

export interface ListResult {
  records: JsonRecord[]
  /** null with `count: 'none'` (the default of cursor pages). */
  total: number | null
  /** null on cursor pages. */
  page: number | null
  per_page: number
  next_cursor?: string | null
  prev_cursor?: string | null
}

// Counts are exact on every call: writes made through the tools do not reach the REST API's
// counters, so nothing is cached.
const exactCounts = createRecordCounter({ ttlMs: 0 })
const definitions = new WeakMap<McpModelSource, Map<McpModel, ListQueryDefinition>>()

/** The model's list grammar: the REST API's allow-lists with every non-sensitive column. */
function definitionOf(source: McpModelSource, model: McpModel): ListQueryDefinition {
  let byModel = definitions.get(source)
  if (!byModel) {
    byModel = new Map()
    definitions.set(source, byModel)
  }
  let definition = byModel.get(model)
  if (!definition) {
    const tables = source.models.map((candidate) => candidate.table)
    try {
      definition = defineListQuery(model.table, {
        include: foreignKeyRelations(model.table, tables),
        search: model.columns
          .filter((column) => column.dataType === 'string' && !isSensitiveField(column.name))
          .filter((column) => /^(varchar|character varying|char|text)/i.test(column.sqlType))
          .map((column) => column.name),
      })
    } catch (error) {
      throw new ToolError(`${model.resource} cannot be listed: ${(error as Error).message}`)
    }
    byModel.set(model, definition)
  }
  return definition
}

/**
 * `crud_list`: the REST list grammar (filters with operators, sort, fields, include, search,
 * cursor, count) on a model, limited to the caller's tenant when the model has `tenant_id`.
 */
export async function listRecords(
  database: Database,
  source: McpModelSource,
  caller: McpCaller | undefined,
  input: ListInput,
): Promise<ListResult> {
  const model = resolveModel(source, input.model)
  const definition = definitionOf(source, model)
  const unknown = Object.keys(input.filters ?? {}).filter(
    (name) => !definition.filterable.has(name),
  )
  if (unknown.length > 0) {
    throw new ToolError(
      `Unknown filter field(s) for ${model.resource}: ${unknown.map((n) => JSON.stringify(n)).join(', ')}. ` +
        `Valid fields: ${[...definition.filterable.keys()].join(', ')}`,
    )
  }
  const tenant = tenantOf(model, caller)
  const scope = tenant && {
    where: eq(drizzleColumn(model, tenant.column), tenant.value),
    key: `tenant:${String(tenant.value)}`,
  }
  try {
    const { data, meta } = await runListQuery(definition, toUrl(input), {
      db: database.db,
      counts: exactCounts,
      scope,
    })
    const result: ListResult = {
      records: data,
      total: meta.total,
      page: meta.current_page ?? null,
      per_page: meta.per_page,
    }
    if (input.cursor !== undefined) {
      result.next_cursor = meta.next_cursor ?? null
      result.prev_cursor = meta.prev_cursor ?? null
    }
    return result
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error
    const problems = Object.entries(error.errors).map(
      ([param, messages]) => `${param}: ${messages.join(', ')}`,
    )
    throw new ToolError(`Invalid list arguments for ${model.resource}: ${problems.join('; ')}`)
  }
}

/** The tool's arguments as the REST grammar's query string. */
function toUrl(input: ListInput): URL {
  const url = new URL('http://localhost/')
  const params = url.searchParams
  for (const [field, value] of Object.entries(input.filters ?? {})) {
    if (value === null) params.set(`filter[${field}][null]`, 'true')
    else if (typeof value !== 'object') params.set(`filter[${field}]`, String(value))
    else {
      for (const [op, operand] of Object.entries(value)) {
        const text = Array.isArray(operand)
          ? operand.map((item) => String(item).replaceAll(',', '\\,')).join(',')
          : String(operand)
        params.set(`filter[${field}][${op}]`, text)
      }
    }
  }
  if (input.sort !== undefined) params.set('sort', input.sort)
  if (input.fields !== undefined) params.set('fields', input.fields.join(','))
  if (input.include !== undefined && input.include.length > 0)
    params.set('include', input.include.join(','))
  if (input.search !== undefined) params.set('search', input.search)
  if (input.cursor !== undefined) params.set('cursor', input.cursor)
  if (input.count !== undefined) params.set('count', input.count)
  if (input.page !== undefined) params.set('page', String(input.page))
  if (input.per_page !== undefined) params.set('per_page', String(input.per_page))
  return url
}
