import { createHash } from 'node:crypto'
import { sql, type Table } from 'drizzle-orm'
import { mapEntry } from '../../core/map-entry.ts'
import type { Dialect } from '../../db/database.ts'
import type { ListQueryDefinition } from './definition.ts'
import { clauseName, type FilterClause } from './filters.ts'
import type { ListQueryPlan } from './plan.ts'
import { compileRowMapper } from './row-mapper.ts'
import type { Bind } from './sql.ts'
import type { QueryDb, Row } from './types.ts'

/**
 * The values of one request as placeholders `v0`, `v1`… in the order the SQL builders bind them.
 * Drizzle encodes a column's values (`mapToDriverValue`: dates, booleans on SQLite, bigints…)
 * when they are bound as parameters, but fills a placeholder with its value as given: the
 * encoding is done here, once per value, so a prepared statement gets what a built query would.
 */
export class Placeholders {
  readonly values: Record<string, unknown> = {}
  #next = 0

  readonly bind: Bind = (value, column) => {
    const name = `v${this.#next++}`
    this.values[name] = value === null || !column ? value : column.mapToDriverValue(value)
    return sql.placeholder(name)
  }
}

/**
 * What decides the text of a page's SQL, beside the table and the database: the columns read,
 * each filter's field, operator and number of values (and what changes its SQL: `null`'s
 * true/false, an empty text needle), the search and how the definition searches, the sort, and
 * the paging mode with the direction of a cursor and which of its values are null. Two
 * requests of one shape differ only in the values of their placeholders, whichever definition
 * of the table they come through (a controller's, `crud_list`'s per-call copy).
 */
export function shapeOf(
  definition: ListQueryDefinition,
  plan: ListQueryPlan,
  columns: string[],
): string {
  const clauseShape = (clause: FilterClause) => {
    const { op, values } = clause
    const variant =
      op === 'null' ? String(values[0]) : values.length === 1 && values[0] === '' ? '∅' : ''
    return `${clauseName(clause)}.${op}.${values.length}${variant}`
  }
  const filters = plan.filters.map(clauseShape)
  // The OR group: each branch's conditions, in branch order.
  if (plan.anyOf.length > 0)
    filters.push(`or(${plan.anyOf.map((branch) => branch.map(clauseShape).join('&')).join('|')})`)
  const sort = plan.sort.map(({ field, desc }) => (desc ? `-${field.name}` : field.name))
  const cursor = plan.cursor
    ? `${plan.cursor.direction}:${plan.cursor.values.map((v) => (v === null ? 'n' : 'v')).join('')}`
    : ''
  return [
    columns.join(','),
    filters.join('&'),
    plan.search === undefined ? '' : searchShape(definition),
    sort.join(','),
    plan.mode,
    cursor,
  ].join('|')
}

function searchShape({ search, searchMode, searchLanguage }: ListQueryDefinition): string {
  const mode = typeof searchMode === 'object' ? `fts5 ${searchMode.fts5}` : searchMode
  return `${mode} ${searchLanguage} ${search.map((field) => field.name).join(',')}`
}

export interface PageStatement {
  /**
   * Runs with `values`; through `via` when given (a Drizzle db over the same database, such as
   * the query budget's: `budgetedDb`), else through the db it was prepared on.
   */
  run(values: Record<string, unknown>, via?: QueryDb): Promise<Row[]>
}

/** Runs with placeholder values: Postgres's `execute`, SQLite's `all`. */
interface Runnable {
  execute?(values: Record<string, unknown>): Promise<Row[]>
  all?(values: Record<string, unknown>): Row[] | Promise<Row[]>
}

/** A Drizzle select with placeholders: run as it is (built per request), or prepared. */
export interface PageQuery extends Runnable {
  toSQL(): { sql: string }
  prepare(name?: string): Runnable
}

const prepared = new WeakMap<Table, WeakMap<object, Map<string, PageStatement>>>()

/**
 * The page query of `shape`, prepared once per table and database: on Postgres a
 * named statement (`kiln_<table>_list_<digest>`), parsed and planned once per connection, on
 * SQLite a prepared statement. Building and preparing the SELECT costs far more than running
 * it with new values, so a repeated shape skips both.
 *
 * At most `limits.maxPreparedShapes` shapes are kept per table and database, the first
 * ones seen; a further shape is built for its request and sent unnamed, as an unprepared query
 * is. They are never evicted: a named statement stays on every pooled connection that ran it,
 * and Drizzle offers no way to deallocate it there, so an LRU would grow the server's statements
 * without bound. A caller making up shapes can only make its own requests cost what they did
 * before the cache; no shape is ever answered with another's SQL.
 */
export function pageStatement(
  db: QueryDb,
  definition: ListQueryDefinition,
  shape: string,
  build: () => PageQuery,
): PageStatement {
  const byDb = mapEntry(prepared, definition.table, () => new WeakMap())
  const byShape = mapEntry(byDb, db, () => new Map<string, PageStatement>())
  const known = byShape.get(shape)
  if (known) return known
  if (byShape.size >= definition.limits.maxPreparedShapes) {
    return runner(definition.dialect, build())
  }
  const page = prepareStatement(build(), definition.dialect, `${definition.tableName}_list`)
  byShape.set(shape, page)
  return page
}

/**
 * Prepares a select that holds placeholders, with its compiled row mapper. On Postgres it is a
 * named statement, `kiln_<label>_<digest of its SQL>` (the label cut to fit the server's 63
 * characters), so the server parses and plans it once per connection; naming it by its text
 * means one name never stands for two statements on a shared connection.
 */
export function prepareStatement(query: PageQuery, dialect: Dialect, label: string): PageStatement {
  const digest = createHash('sha256').update(query.toSQL().sql).digest('hex').slice(0, 16)
  const statement =
    dialect === 'postgres' ? query.prepare(`kiln_${label.slice(0, 40)}_${digest}`) : query.prepare()
  compileRowMapper(statement)
  return runner(dialect, statement)
}

/** How many shapes are prepared for the table of `definition` on `db` (for tests of the bound). */
export function preparedShapeCount(db: QueryDb, definition: ListQueryDefinition): number {
  return prepared.get(definition.table)?.get(db)?.size ?? 0
}

/** Runs a Drizzle select that holds placeholders, unprepared, with their values. */
export function runQuery(
  definition: ListQueryDefinition,
  query: Runnable,
  values: Record<string, unknown>,
): Promise<Row[]> {
  return runner(definition.dialect, query).run(values)
}

function runner(dialect: Dialect, statement: Runnable): PageStatement {
  return dialect === 'postgres'
    ? { run: async (values, via) => through(statement, via).execute!(values) }
    : { run: async (values) => statement.all!(values) }
}

/**
 * A Postgres statement sent through the client of `via` instead of its own: the same prepared
 * statement (its name, text, decoders), another way to the server.
 */
function through(statement: Runnable, via: QueryDb | undefined): Runnable {
  const client = (via as { $client?: unknown } | undefined)?.$client
  const own = statement as { client?: unknown }
  if (client === undefined || !('client' in own) || own.client === client) return statement
  return Object.create(statement, { client: { value: client } }) as Runnable
}
