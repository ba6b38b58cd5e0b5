import { and, avg, count, max, min, type SQL, sum } from 'drizzle-orm'
import type { PostgresDb, SqliteDb } from '../../db/database.ts'
import { budgetError, budgetedDb } from '../../db/query-budget.ts'
import type { SoftDelete } from '../rest/soft-delete.ts'
import type { ListQueryDefinition, QueryCaller, QueryField } from './definition.ts'
import { type FilterClause, planFilters } from './filters.ts'
import { type QueryInput, QueryProblems, readListQuery, splitList } from './grammar.ts'
import { planSearch } from './plan.ts'
import { withRowFilter } from './run.ts'
import { bindValues, orderOf, whereOf } from './sql.ts'
import { trashedRead } from './trash.ts'
import { toJsonValue } from './values.ts'

export type { AggregateAllowLists } from './definition.ts'

/** The functions an aggregate request may ask for, each a query parameter. */
export const AGGREGATE_FUNCTIONS = ['count', 'sum', 'avg', 'min', 'max'] as const
export type AggregateFunction = (typeof AGGREGATE_FUNCTIONS)[number]
type FieldFunction = Exclude<AggregateFunction, 'count'>

/** The list parameters an aggregate does not take: it answers groups, not pages of records. */
const LIST_ONLY = ['sort', 'fields', 'include', 'cursor', 'page', 'per_page'] as const

/** An aggregate request checked against the allow-lists. */
export interface AggregatePlan {
  filters: FilterClause[]
  anyOf: FilterClause[][]
  search: string | undefined
  count: boolean
  fields: Record<FieldFunction, QueryField[]>
  groupBy: QueryField[]
}

/** One group: the `group_by` fields' values, the row count and each function's values by field. */
export interface AggregateGroup {
  group: Record<string, unknown>
  count?: number
  sum?: Record<string, number | string | null>
  avg?: Record<string, number | string | null>
  min?: Record<string, unknown>
  max?: Record<string, unknown>
}

/**
 * What `runAggregateQuery` answers and the `aggregate` route sends as is: `{ data, meta }`,
 * one entry of `data` per group (a single one without `group_by`).
 */
export interface AggregateEnvelope {
  /** The groups, ordered by their `group_by` values. */
  data: AggregateGroup[]
  /** `groups`: how many are answered; `truncated`: more groups matched than `limits.maxGroups`. */
  meta: { groups: number; truncated: boolean }
}

/**
 * What `runAggregateQuery` needs beside the definition and the URL, as `ListQueryContext` for
 * lists: the database, the caller, a scope and the request's signal. No count cache: an
 * aggregate reads the rows each time.
 */
export interface AggregateContext {
  /** The database the aggregate reads (PostgreSQL or SQLite, as the definition's dialect). */
  db: PostgresDb | SqliteDb
  /** Who asks: the resource's row filter (`rows`) is applied for it, as lists apply it. */
  caller?: QueryCaller | undefined
  /** A condition every counted row must meet (a tenant), as `ListQueryContext.scope`. */
  scope?: { where: SQL; key: string } | undefined
  /** The request's signal (`c.req.raw.signal`): a client that hangs up cancels the query. */
  signal?: AbortSignal | undefined
  /**
   * The resource's soft delete, as the list's (`ListQueryContext.softDelete`): trashed records
   * are left out unless `filter[trashed]=with|only` asks, from a key holding its scopes. Without
   * it, a table's `deleted_at` column still leaves them out (`softDeleteOf`).
   */
  softDelete?: SoftDelete | undefined
}

/**
 * Checks an aggregate request (`count=*&sum=token_count&group_by=author_id`, with the list's
 * `filter[…]` and `search=`) against the resource's allow-lists; every problem is collected
 * and thrown as one 422. Without any function it counts.
 */
export function planAggregateQuery(
  definition: ListQueryDefinition,
  input: QueryInput,
): AggregatePlan {
  const problems = new QueryProblems()
  const params =
    input instanceof URLSearchParams
      ? input
      : new URLSearchParams(
          Object.entries(input).flatMap(([k, v]) => (v === undefined ? [] : [[k, v]])),
        )
  const raw = readListQuery(params, problems)
  for (const name of LIST_ONLY) {
    if (params.has(name)) problems.add(name, 'does not apply to aggregates')
  }
  const { filters, anyOf } = planFilters(definition, raw.filters, problems)
  const search = planSearch(definition, raw.search, problems)
  const allowed = definition.aggregates
  const read = (param: string, allowList: Map<string, QueryField>, max = Infinity) => {
    const values = params.getAll(param)
    if (values.length === 0) return []
    if (values.length > 1) {
      problems.add(param, 'is given more than once')
      return []
    }
    const fields: QueryField[] = []
    const names = splitList(values[0]!)
    for (const name of names) {
      const field = allowList.get(name)
      if (!field) {
        const list = [...allowList.keys()].join(', ')
        problems.add(param, `"${name}" is not allowed; allowed: ${list || '(none)'}`)
      } else if (fields.includes(field)) problems.add(param, `names ${name} twice`)
      else fields.push(field)
    }
    if (fields.length > max) problems.add(param, `at most ${max} fields`)
    return fields
  }
  const fields = {
    sum: read('sum', allowed.sum),
    avg: read('avg', allowed.avg),
    min: read('min', allowed.min),
    max: read('max', allowed.max),
  }
  const groupBy = read('group_by', allowed.groupBy, definition.limits.maxGroupBy)
  if (raw.count !== undefined && raw.count !== '*') problems.add('count', 'must be *')
  const anyField = Object.values(fields).some((list) => list.length > 0)
  problems.throwIfAny()
  return { filters, anyOf, search, count: raw.count !== undefined || !anyField, fields, groupBy }
}

/**
 * Answers an aggregate request in one query: `count(*)`, `sum`, `avg`, `min` and `max` over the
 * rows the list's filters, search, soft delete, the caller's row filter and `scope` leave, one group per
 * distinct value of the `group_by` fields (ordered by them, NULL last), at most
 * `limits.maxGroups` groups.
 */
export async function runAggregateQuery(
  definition: ListQueryDefinition,
  url: string | URL,
  context: AggregateContext,
): Promise<AggregateEnvelope> {
  const parsed = typeof url === 'string' ? new URL(url, 'http://localhost') : url
  // The list's rule: trashed records are counted only when asked for, by a key that may.
  const { trashed, params } = trashedRead(definition, parsed.searchParams, context)
  const plan = planAggregateQuery(definition, params)
  const scope = withRowFilter(
    withRowFilter(context.scope, trashed),
    definition.rows?.(context.caller),
  )
  const where = and(whereOf(definition, plan, bindValues), scope?.where)
  const selection: Record<string, SQL | QueryField['column']> = {}
  plan.groupBy.forEach((field, i) => {
    selection[`g${i}`] = field.column
  })
  if (plan.count) selection.count = count()
  const functions = { sum, avg, min, max }
  for (const fn of ['sum', 'avg', 'min', 'max'] as const) {
    plan.fields[fn].forEach((field, i) => {
      selection[`${fn}${i}`] = functions[fn](field.column)
    })
  }
  const limit = definition.limits.maxGroups
  // An aggregate scans every row the filters leave: it runs under the database's budget, as a
  // slow list page does (a statement timeout, a cancel on hang-up), logged by its shape.
  const shape = `${definition.tableName} aggregate ${Object.keys(selection).join(',')} group_by:${plan.groupBy.map((f) => f.name).join(',')} filters:${filterShape(parsed.searchParams)}`
  // biome-ignore lint/suspicious/noExplicitAny: one code path builds queries for both dialects' Drizzle databases
  const db = budgetedDb(context.db, { signal: context.signal, shape }) as any
  let query = db.select(selection).from(definition.table).where(where)
  if (plan.groupBy.length > 0) {
    query = query
      .groupBy(...plan.groupBy.map((field) => field.column))
      .orderBy(...orderOf(plan.groupBy.map((field) => ({ field, desc: false }))))
      .limit(limit + 1)
  }
  let rows: Array<Record<string, unknown>>
  try {
    rows = (await query) as Array<Record<string, unknown>>
  } catch (error) {
    // Bare: Drizzle's wrapper of the budget's error holds the query's values.
    throw budgetError(error) ?? error
  }
  const truncated = rows.length > limit
  const data = rows.slice(0, limit).map((row) => toGroup(plan, row))
  return { data, meta: { groups: data.length, truncated } }
}

/** The filter parameters' names, never their values: `filter[body][contains]` → `body.contains`. */
function filterShape(params: URLSearchParams): string {
  const names = new Set<string>()
  for (const key of params.keys()) {
    if (key.startsWith('filter[') || key === 'search') {
      names.add(
        key
          .replace(/^filter/, '')
          .replace(/\]\[/g, '.')
          .replace(/[[\]]/g, ''),
      )
    }
  }
  return [...names].sort().join(',')
}

function toGroup(plan: AggregatePlan, row: Record<string, unknown>): AggregateGroup {
  const group: AggregateGroup = {
    group: Object.fromEntries(
      plan.groupBy.map((field, i) => [field.name, toJsonValue(row[`g${i}`])]),
    ),
  }
  if (plan.count) group.count = Number(row.count)
  for (const fn of ['sum', 'avg'] as const) {
    if (plan.fields[fn].length === 0) continue
    group[fn] = Object.fromEntries(
      plan.fields[fn].map((field, i) => [field.name, numberOf(field, row[`${fn}${i}`])]),
    )
  }
  for (const fn of ['min', 'max'] as const) {
    if (plan.fields[fn].length === 0) continue
    group[fn] = Object.fromEntries(
      plan.fields[fn].map((field, i) => [field.name, toJsonValue(row[`${fn}${i}`])]),
    )
  }
  return group
}

/** A sum or average: a JSON number for integer and floating fields, a string (exact) for decimal and bigint ones. */
function numberOf(field: QueryField, value: unknown): number | string | null {
  if (value === null || value === undefined) return null
  if (field.kind === 'decimal' || field.kind === 'bigint') return String(value)
  return Number(value)
}
