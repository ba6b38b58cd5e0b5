import { eq } from 'drizzle-orm'
import {
  foreignKeyRelations,
  type ListQueryDefinition,
  type RecordCounter,
  type RelationSpec,
  runListQuery,
} from '../api/index.ts'
import { buildListQuery, describeFields } from '../api/query/definition.ts'
import { softDeleteColumn, softDeletes } from '../api/rest/soft-delete.ts'
import { ValidationError } from '../core/errors.ts'
import { mapEntry } from '../core/map-entry.ts'
import type { Database } from '../db/index.ts'
import { type AccessPolicy, authorizeCall, type McpCaller, type ModelAccess } from './access.ts'
import {
  DEFAULT_PER_PAGE,
  drizzleColumn,
  type JsonRecord,
  MAX_PER_PAGE,
  tenantOf,
} from './crud-input.ts'
import type { McpModel } from './models.ts'
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

interface ModelQuery {
  definition: ListQueryDefinition
  /** The model each relation of `definition` reads. */
  targets: Map<string, McpModel>
}

const queries = new WeakMap<AccessPolicy, Map<McpModel, ModelQuery>>()

/**
 * The model's list grammar under the policy: `fields`, `filter`, `sort` and `search` over the
 * readable columns only, and `include` only of relations whose key is readable here and whose
 * model the policy lets `crud_list` read, its records cut to that model's readable columns.
 */
function queryOf(policy: AccessPolicy, model: McpModel, access: ModelAccess): ModelQuery {
  const byModel = mapEntry(queries, policy, () => new Map<McpModel, ModelQuery>())
  let query = byModel.get(model)
  if (query) return query
  const readable = access.readable
  const readableNames = new Set(readable.map((column) => column.name))
  const tables = policy.visibleModels.map((candidate) => candidate.table)
  const targets = new Map<string, McpModel>()
  const include: Record<string, RelationSpec> = {}
  for (const [name, spec] of Object.entries(foreignKeyRelations(model.table, tables))) {
    const target = policy.visibleModels.find((candidate) => candidate.table === spec.table)
    if (!target || !policy.of(target)?.tools.has('crud_list')) continue
    if (!readableNames.has(spec.local.name)) continue
    include[name] = spec
    targets.set(name, target)
  }
  let definition: ListQueryDefinition
  try {
    // The policy's readable columns were checked by the credential rule (and its opt-ins).
    const names = readable.map((column) => column.name)
    definition = buildListQuery(
      model.table,
      {
        fields: names,
        expose: names,
        include,
        search: readable
          .filter((column) => column.dataType === 'string')
          .filter((column) => /^(varchar|character varying|char|text)/i.test(column.sqlType))
          .map((column) => column.name),
      },
      // Each relation's model was checked against the tools' policy above and per call below.
      { relationScopes: false },
    )
  } catch (error) {
    throw new ToolError(`${model.resource} cannot be listed: ${(error as Error).message}`)
  }
  for (const [name, relation] of definition.relations) {
    const shown = new Set(policy.of(targets.get(name)!)!.readable.map((column) => column.name))
    relation.fields = describeFields(relation.table).filter((field) => shown.has(field.name))
  }
  query = { definition, targets }
  byModel.set(model, query)
  return query
}

/**
 * `crud_list` after `checkCall`: the REST list grammar (filters with operators, sort, fields,
 * include, search, cursor, count) on the caller's readable columns, within its tenant. `total`
 * comes from `counts`, the REST list's counter when the app shares it.
 */
export async function listRecords(
  database: Database,
  counts: RecordCounter,
  policy: AccessPolicy,
  model: McpModel,
  access: ModelAccess,
  caller: McpCaller | undefined,
  input: ListInput,
): Promise<ListResult> {
  checkPaging(input)
  const { definition, targets } = queryOf(policy, model, access)
  const unknown = Object.keys(input.filters ?? {}).filter((n) => !definition.filterable.has(n))
  if (unknown.length > 0) {
    throw new ToolError(
      `Unknown filter field(s) for ${model.resource}: ${unknown.map((n) => JSON.stringify(n)).join(', ')}. ` +
        `Valid fields: ${[...definition.filterable.keys()].join(', ')}`,
    )
  }
  await authorizeCall(policy, model, { caller, action: 'crud_list' })
  const scoped = await scopeRelations(policy, definition, targets, caller, input.include ?? [])
  const tenant = tenantOf(model, access, caller)
  const scope = tenant && {
    where: eq(drizzleColumn(model, tenant.column), tenant.value),
    key: `tenant:${String(tenant.value)}`,
  }
  // Soft-deleted records (a `deleted_at` column) are hidden, as the REST list hides them.
  const trash = softDeleteColumn(model.table)
  let envelope: Awaited<ReturnType<typeof runListQuery>>
  try {
    envelope = await runListQuery(scoped, toUrl(input), {
      db: database.db,
      counts,
      scope,
      softDelete: trash && softDeletes(trash),
    })
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error
    const problems = Object.entries(error.errors).map(
      ([param, messages]) => `${param}: ${messages.join(', ')}`,
    )
    throw new ToolError(`Invalid list arguments for ${model.resource}: ${problems.join('; ')}`)
  }
  const { data, meta } = envelope
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
}

/** The spec's paging rules: integers of at least 1; a per_page beyond 100 is capped, not refused. */
function checkPaging({ page, per_page }: ListInput): void {
  if (page !== undefined && (!Number.isSafeInteger(page) || page < 1))
    throw new ToolError('page must be an integer of at least 1')
  if (per_page !== undefined && (!Number.isInteger(per_page) || per_page < 1))
    throw new ToolError('per_page must be an integer of at least 1')
}

/**
 * The definition for this caller: each requested relation limited to the caller's tenant on
 * its model (fail closed: a model tenants cannot read is not includable), after the app's
 * `authorize` hook allowed reading that model too.
 */
async function scopeRelations(
  policy: AccessPolicy,
  definition: ListQueryDefinition,
  targets: Map<string, McpModel>,
  caller: McpCaller | undefined,
  requested: readonly string[],
): Promise<ListQueryDefinition> {
  const relations = new Map(definition.relations)
  for (const name of new Set(requested)) {
    const relation = relations.get(name)
    const target = targets.get(name)
    if (!relation || !target) continue
    const access = policy.of(target)!
    if (caller?.tenantId !== undefined && !access.tenantColumn && !access.global) {
      throw new ToolError(`include: ${target.resource} is not available to tenants`)
    }
    await authorizeCall(policy, target, { caller, action: 'crud_list' })
    const tenant = tenantOf(target, access, caller)
    if (tenant)
      relations.set(name, {
        ...relation,
        where: eq(drizzleColumn(target, tenant.column), tenant.value),
      })
  }
  return { ...definition, relations }
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
  params.set('per_page', String(Math.min(input.per_page ?? DEFAULT_PER_PAGE, MAX_PER_PAGE)))
  return url
}
