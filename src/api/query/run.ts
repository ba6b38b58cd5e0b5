import { and, type Column, getTableColumns, type SQL, sql } from 'drizzle-orm'
import type { PostgresDb, SqliteDb } from '../../db/database.ts'
import { budgetError, budgetedDb } from '../../db/query-budget.ts'
import { DEFAULT_PER_PAGE } from '../rest/pagination.ts'
import type { RecordCounter } from '../rest/record-counter.ts'
import { notTrashed, type SoftDelete, softDeleteColumn } from '../rest/soft-delete.ts'
import { type BoundCondition, countRecords } from './count.ts'
import type {
  ListQueryDefinition,
  QueryCaller,
  QueryField,
  ResolvedRelation,
} from './definition.ts'
import { cursorEnvelope, LinkBuilder, type ListEnvelope, offsetEnvelope } from './envelope.ts'
import { loadRelation, selectionOf } from './include.ts'
import { exactTimestamp, type ListQueryPlan, type PlanOptions, planListQuery } from './plan.ts'
import { serializeFields } from './serialize.ts'
import { keysetCondition, orderOf, whereOf } from './sql.ts'
import { Placeholders, pageStatement, runQuery, shapeOf } from './statement.ts'
import { trashedRead } from './trash.ts'
import type { QueryDb, Row } from './types.ts'

export type { ListEnvelope, ListLinks, ListMeta } from './envelope.ts'
export type { QueryDb, Row } from './types.ts'

/**
 * What `runListQuery` needs beside the definition and the URL: the database, the count cache,
 * the caller, and what bounds this request (a scope, its signal, a soft delete). A controller's
 * `index` handler builds it per request.
 */
export interface ListQueryContext extends PlanOptions {
  /** The database the list reads (PostgreSQL or SQLite, as the definition's dialect). */
  db: PostgresDb | SqliteDb
  /** Cached totals (`createRecordCounter()`), shared with the controller's writes. */
  counts: RecordCounter
  /**
   * A condition every record must meet whatever the request says (a tenant, an owner), with a
   * `key` naming it in the count cache (e.g. `tenant:acme`).
   */
  scope?: { where: SQL; key: string } | undefined
  /**
   * The request's signal (`c.req.raw.signal`): when the client hangs up, the list's running
   * query is cancelled on the server (PostgreSQL; docs/database.md, "The query budget").
   */
  signal?: AbortSignal | undefined
  /**
   * A soft-deleting resource (`softDeletes(posts.deletedAt, 'posts:write')`): trashed records
   * are hidden unless `filter[trashed]=with|only` asks, from a key holding its scopes. Without
   * it, a table's `deleted_at` column still hides them (`softDeleteOf`).
   */
  softDelete?: SoftDelete | undefined
}

/**
 * Answers a list request: checks its parameters against `definition` (422 naming each bad
 * one), reads one page with the filters, search, sort and fields in SQL, loads each included
 * relation in one more query, counts by the requested strategy, and wraps it all in the list
 * envelope. `url` is the request URL (its path makes the links).
 */
export async function runListQuery(
  definition: ListQueryDefinition,
  url: string | URL,
  context: ListQueryContext,
): Promise<ListEnvelope> {
  const parsed = typeof url === 'string' ? new URL(url, 'http://localhost') : url
  const { db, counts } = context
  // `filter[trashed]` is the soft delete's own parameter, not a filter on a field.
  const { trashed, params } = trashedRead(definition, parsed.searchParams, context)
  const plan = planListQuery(definition, params, context)
  const scope = withRowFilter(
    withRowFilter(context.scope, trashed),
    definition.rows?.(context.caller),
  )
  const includes = plan.includes.map((relation) => rowsOfRelation(relation, context.caller))
  // Every value becomes a placeholder: the page's statement is prepared once per query shape.
  const placeholders = new Placeholders()
  const filtered: BoundCondition = {
    where: and(whereOf(definition, plan, placeholders.bind), scope?.where),
    values: placeholders.values,
  }
  const variant = [plan.whereKey, scope?.key ?? ''].filter(Boolean).join(':')
  // The queries that may be slow run under the database's budget (a statement timeout, a
  // cancel when the client hangs up, a pooled connection of their own): the counts, and the
  // page itself unless it is a fast one (`pageMayBeSlow`). Included relations are read by the
  // page's keys (at most per_page of them) and stay where they were.
  const shape = `${definition.tableName} ${shapeOf(
    definition,
    plan,
    plan.output.map((f) => f.name),
  )}`
  // Built when a query takes the budget's path (a Drizzle session of its own): a fast page
  // whose total is cached or not asked for never builds it.
  let budgetedOnce: QueryDb | undefined
  const budgeted = () => (budgetedOnce ??= budgetedDb(db, { signal: context.signal, shape }))
  const fast = !pageMayBeSlow(definition, plan, scope !== undefined)
  let rows: Row[]
  let hasMore: boolean
  let included: unknown[][]
  let counted: Awaited<ReturnType<typeof countRecords>>
  try {
    // Past page 1 the count is started beside the page read, not after it: on a large table an
    // uncached count and a deep OFFSET each take a while, and in a row they add up. It assumes a
    // full page; a partial one (the last page) ends the table and is counted without it.
    const early =
      plan.mode === 'offset' && plan.offset > 0 && plan.count !== 'none'
        ? countRecords(budgeted, definition, plan, filtered, counts, plan.perPage, variant)
        : undefined
    early?.catch(() => {}) // awaited below when used; never an unhandled rejection
    ;({ rows, hasMore } = await readPage(
      db,
      fast ? db : budgeted(),
      definition,
      plan,
      filtered,
      placeholders,
      !scope,
    ))
    ;[included, counted] = await Promise.all([
      Promise.all(includes.map((relation) => loadRelation(db, relation, rows, definition.dialect))),
      early && rows.length === plan.perPage
        ? early
        : countRecords(budgeted, definition, plan, filtered, counts, rows.length, variant),
    ])
  } catch (error) {
    // Bare: Drizzle's wrapper of the budget's error holds the query's values.
    throw budgetError(error) ?? error
  }
  const data = rows.map((row, i) => {
    const record = toRecord(definition, plan, row)
    plan.includes.forEach((relation, r) => {
      record[relation.name] = included[r]![i]
    })
    return record
  })
  const links = new LinkBuilder(parsed, context.defaultPerPage ?? DEFAULT_PER_PAGE)
  const countGiven = parsed.searchParams.has('count')
  if (plan.mode === 'cursor')
    return cursorEnvelope(definition, plan, rows, data, hasMore, counted.total, counted.kind, links)
  return offsetEnvelope(plan, rows, data, counted, links, countGiven)
}

/** Rows a page may skip and read and still be fast (an index scan of the primary key). */
export const FAST_PAGE_ROWS = 1_000

/**
 * The one rule of which list pages may be slow, from what the planner knows: a filter, a
 * search, a scope or row filter (a condition on any column), an order other than the primary
 * key's (a sort of every matching row unless an index serves it), or an offset page reaching
 * past `FAST_PAGE_ROWS` rows (the server reads every row it skips). Such a page runs under the
 * query budget on a pooled connection; the others (a first page, a cursor page, in key order,
 * unfiltered) stay on the pipelined connections with the shows.
 */
export function pageMayBeSlow(
  definition: ListQueryDefinition,
  plan: ListQueryPlan,
  scoped: boolean,
): boolean {
  if (scoped || plan.filters.length > 0 || plan.search !== undefined) return true
  if (plan.mode === 'offset' && plan.offset + plan.perPage > FAST_PAGE_ROWS) return true
  const key = definition.primaryKey
  return key === undefined || plan.sort.some(({ field }) => field !== key)
}

/** The context's scope and the resource's row filter for this caller, both applied. */
export function withRowFilter(
  scope: ListQueryContext['scope'],
  rows: { where: SQL; key: string } | undefined,
): ListQueryContext['scope'] {
  if (!rows) return scope
  if (!scope) return rows
  return { where: and(scope.where, rows.where)!, key: `${scope.key}:${rows.key}` }
}

/**
 * An included relation limited to the caller's rows of the related model (its row filter), and
 * to its records not in the trash.
 */
function rowsOfRelation(relation: ResolvedRelation, caller: QueryCaller | undefined) {
  const rows = relation.rows?.(caller)
  // A soft-deleting related model (`deleted_at`): its trashed records are left out, as its list does.
  const trash = softDeleteColumn(relation.table)
  if (!rows && !trash) return relation
  return { ...relation, where: and(relation.where, rows?.where, trash && notTrashed(trash)) }
}

async function readPage(
  db: QueryDb,
  /** What the page is sent through: `db`, or the budget's db over the same database. */
  via: QueryDb,
  definition: ListQueryDefinition,
  plan: ListQueryPlan,
  filtered: BoundCondition,
  placeholders: Placeholders,
  /** False when the condition holds values of its own (a scope): built for this request. */
  preparable: boolean,
) {
  const selection: Record<string, Column | SQL.Aliased> = selectionOf(
    neededFields(definition, plan),
  )
  const offsetMode = plan.mode === 'offset'
  // A cursor holds a timestamp's exact text (microseconds a Date would lose); offset pages make none.
  if (!offsetMode) {
    plan.sort.forEach(({ field }, i) => {
      if (exactTimestamp(definition, field))
        selection[`kiln_cursor_${i}`] = sql<string>`${field.column}::text`.as(`kiln_cursor_${i}`)
    })
  }
  const { bind } = placeholders
  const reverse = plan.cursor?.direction === 'prev'
  const keyset = plan.cursor
    ? keysetCondition(definition, plan.sort, plan.cursor.values, reverse, bind)
    : undefined
  // A cursor page reads one record more: whether there is a next page.
  const limit = bind(offsetMode ? plan.perPage : plan.perPage + 1)
  const offset = offsetMode ? bind(plan.offset) : undefined
  const build = (on: QueryDb) => {
    const query = on
      .select(selection)
      .from(definition.table)
      .where(and(filtered.where, keyset))
      .orderBy(...orderOf(plan.sort, reverse))
      .limit(limit)
    return offset === undefined ? query : query.offset(offset)
  }
  const rows: Row[] = preparable
    ? await pageStatement(db, definition, shapeOf(definition, plan, Object.keys(selection)), () =>
        build(db),
      ).run(placeholders.values, via)
    : await runQuery(definition, build(via), placeholders.values)
  if (offsetMode) return { rows, hasMore: false }
  const hasMore = rows.length > plan.perPage
  const page = rows.slice(0, plan.perPage)
  if (reverse) page.reverse()
  return { rows: page, hasMore }
}

/** The columns to read: what records show, or all for `resource`, plus keys for cursors and relations. */
function neededFields(definition: ListQueryDefinition, plan: ListQueryPlan): QueryField[] {
  if (!plan.partial && definition.resource) {
    const all = getTableColumns(definition.table)
    return [...definition.columns.values()].filter((field) => all[field.key] !== undefined)
  }
  const needed = new Set<QueryField>(plan.output)
  for (const { field } of plan.sort) needed.add(field)
  for (const relation of plan.includes) needed.add(relation.local)
  return [...needed]
}

function toRecord(
  definition: ListQueryDefinition,
  plan: ListQueryPlan,
  row: Row,
): Record<string, unknown> {
  if (!plan.partial && definition.resource) {
    const record = (definition.record as (row: Row) => Record<string, unknown>)(row)
    // Included relations are added to the record: never to an object the resource may share.
    return plan.includes.length === 0 ? record : { ...record }
  }
  return serializeFields(plan.output, row)
}
