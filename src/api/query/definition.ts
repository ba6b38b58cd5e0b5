import { type Column, getTableColumns, getTableName, is, type SQL, type Table } from 'drizzle-orm'
import { getTableConfig as getPgTableConfig, PgTable } from 'drizzle-orm/pg-core'
import { getTableConfig as getSqliteTableConfig, type SQLiteTable } from 'drizzle-orm/sqlite-core'
import { Secret } from '../../core/secret.ts'
import { type ColumnInfo, describeColumn } from '../../db/models/columns.ts'
import {
  declareReadPolicy,
  defaultReadScope,
  type ModelReadPolicy,
  type PolicyCaller,
  type RowFilter,
  readPolicyOf,
} from '../../db/models/policy.ts'

/** Who asks: the request's API key (`c.get('apiKey')`), or any caller with scopes. */
export type QueryCaller = PolicyCaller

import { aggregateAllowLists, comparable, fieldPicker, isSensitive } from './allow-lists.ts'
import { DEFAULT_QUERY_LIMITS, type QueryLimits } from './limits.ts'
import type { ListQueryOptions, RelationSpec, SearchMode } from './options.ts'
import { recordMaker, withheldNames } from './record.ts'
import { type FieldKind, type FieldStructure, fieldKindOf, structureOf } from './values.ts'

/** One column as the query grammar sees it: its wire name, Drizzle column and kind. */
export interface QueryField {
  /** The database column name, the field's name on the wire (`author_id`). */
  name: string
  /** The Drizzle table's property (`authorId`). */
  key: string
  column: Column
  info: ColumnInfo
  kind: FieldKind
  /** An array or JSON column, which filters read by its elements or paths (kind `other`). */
  structure?: FieldStructure | undefined
}

/** A resource's aggregate allow-lists, by function, and the fields `group_by=` takes. */
export interface AggregateAllowLists {
  sum: Map<string, QueryField>
  avg: Map<string, QueryField>
  min: Map<string, QueryField>
  max: Map<string, QueryField>
  groupBy: Map<string, QueryField>
}

export interface ResolvedRelation {
  name: string
  kind: RelationSpec['kind']
  table: Table
  local: QueryField
  remote: QueryField
  /** The related table's fields that included records show (never sensitive ones). */
  fields: QueryField[]
  /** The order of has-many records: the related table's key (see `orderKeyOf`). */
  order: QueryField[]
  limit: number
  /** A condition every related record must meet too (a caller's tenant), set per request. */
  where?: SQL | undefined
  /** The related model's row filter: its records are limited to the caller's rows too. */
  rows?: RowFilter | undefined
  /**
   * The scope a key needs to include it: the related resource's read scope (`users:read`).
   * Undefined where the surface decided access itself (the MCP tools' policy).
   */
  readScope: string | undefined
}

/** A resource's query allow-lists, checked once when the controller is built. */
export interface ListQueryDefinition {
  table: Table
  tableName: string
  dialect: 'postgres' | 'sqlite'
  /** The single-column primary key; undefined for a composite key or none (see `tieBreaker`). */
  primaryKey: QueryField | undefined
  /**
   * The fields that end every order, so that pages never overlap: the primary key, the
   * columns of a composite one, or for a table without a primary key every comparable field
   * records show.
   */
  tieBreaker: QueryField[]
  /** `tieBreaker` identifies one record (it is a primary key): cursors need that. */
  keyed: boolean
  /** Every column of the table, by wire name. */
  columns: Map<string, QueryField>
  fields: QueryField[]
  filterable: Map<string, QueryField>
  sortable: Map<string, QueryField>
  /** What aggregates may compute and group by (`ListQueryOptions.aggregate`). */
  aggregates: AggregateAllowLists
  search: QueryField[]
  searchMode: SearchMode
  searchLanguage: string
  relations: Map<string, ResolvedRelation>
  defaultSort: string | undefined
  limits: QueryLimits
  /** The query's own cursor secret; without one, `cursorSecretOf` derives it from the app's key. */
  cursorSecret: Secret | undefined
  estimateThreshold: number
  resource: ((row: never) => object) | undefined
  /** The names records never show: the columns `fields` leaves out, by wire and property name. */
  withheld: readonly string[]
  /**
   * The record a reader gets of a full row: the resource's, kept to `fields`. Show, create and
   * update answer with it, as the list does. A bound function: `rows.map(postsQuery.record)`.
   */
  record(row: never): object
  /** The rows a caller may read (`ListQueryOptions.rows`). */
  rows: RowFilter | undefined
}

/**
 * What `defineListQuery` returns: the definition, its `record` typed by the table and resource.
 * The type is the resource's: a column `fields` leaves out is absent at run time even where the
 * resource's type still names it (drop it from the resource too to keep the type exact).
 */
export interface ListQuery<Row, Rec extends object> extends ListQueryDefinition {
  // A method's signature, so that any definition passes where `ReturnType<typeof
  // defineListQuery>` is asked for; the function itself is bound (an arrow).
  record(row: Row): Rec
}

/** Describes every column of a Drizzle table. */
export function describeFields(table: Table): QueryField[] {
  const dialect = is(table, PgTable) ? 'postgres' : 'sqlite'
  return Object.entries(getTableColumns(table)).map(([key, column]) => {
    const info = describeColumn(key, column, dialect, {
      inPrimaryKey: false,
      singlePrimaryKey: true,
    })
    return {
      name: column.name,
      key,
      column,
      info,
      kind: fieldKindOf(info),
      structure: structureOf(info),
    }
  })
}

/**
 * The allow-lists of a list endpoint: which fields `filter`, `sort`, `fields` and `search` may
 * name and which relations `include` may load. Every name is checked here, when the routes are
 * built: an unknown or sensitive field is a TypeError at start-up, never a surprise per request.
 * @example
 * ```ts
 * export const postsQuery = defineListQuery(posts, { readScope: 'posts:read' })
 * ```
 */
export function defineListQuery<T extends Table, Rec extends object = Record<string, unknown>>(
  table: T,
  options: ListQueryOptions<T['$inferSelect'], Rec> = {},
): ListQuery<T['$inferSelect'], Rec> {
  const definition = buildListQuery(table, options) as ListQuery<T['$inferSelect'], Rec>
  declareReadPolicy(table, {
    readScope: options.readScope ?? defaultReadScope(table),
    readable: new Set(definition.fields.map((field) => field.name)),
    rows: options.rows,
  })
  return definition
}

/**
 * `defineListQuery` without declaring the table's read policy: a surface's own view of a model
 * (the MCP tools' `crud_list`), whose relations it has already checked (`relationScopes: false`).
 */
export function buildListQuery<T extends Table, Rec extends object = object>(
  table: T,
  options: ListQueryOptions<T['$inferSelect'], Rec> = {},
  { relationScopes = true }: { relationScopes?: boolean } = {},
): ListQueryDefinition {
  const credentials = { sensitive: options.sensitive, expose: options.expose }
  const tableName = getTableName(table)
  const all = describeFields(table)
  const columns = new Map(all.map((field) => [field.name, field]))
  const pick = fieldPicker(tableName, columns, credentials)
  const visible = all.filter((field) => !isSensitive(field, credentials))
  const fields = options.fields ? pick(options.fields, 'fields') : visible
  const key = orderKeyOf(table, all, fields)
  if (key.fields.length === 0) {
    throw new TypeError(
      `defineListQuery(${tableName}): the table has no primary key and no comparable field to order by`,
    )
  }
  const primaryKey = key.keyed && key.fields.length === 1 ? key.fields[0] : undefined
  const defaults = fields.filter((field) => field.kind !== 'other').map((field) => field.name)
  const filterDefaults = fields
    .filter((field) => field.kind !== 'other' || field.structure)
    .map((field) => field.name)
  const filterable = pick(options.filter ?? filterDefaults, 'filter', (field) =>
    field.structure ? undefined : comparable(field),
  )
  const sortable = pick(options.sort ?? defaults, 'sort', comparable)
  const aggregates = aggregateAllowLists(pick, sortable, options.aggregate ?? {})
  const search = pick(options.search ?? [], 'search', (field) =>
    field.kind === 'text' ? undefined : 'is not a text column',
  )
  const resource = options.resource as ListQueryDefinition['resource']
  const withheld = withheldNames(all, fields)
  const definition: ListQueryDefinition = {
    table,
    tableName,
    dialect: is(table, PgTable) ? 'postgres' : 'sqlite',
    primaryKey,
    tieBreaker: key.fields,
    keyed: key.keyed,
    columns,
    fields,
    filterable: new Map(filterable.map((field) => [field.name, field])),
    sortable: new Map(sortable.map((field) => [field.name, field])),
    aggregates,
    search,
    searchMode: options.searchMode ?? 'like',
    searchLanguage: options.searchLanguage ?? 'simple',
    relations: new Map(),
    defaultSort: options.defaultSort,
    limits: { ...DEFAULT_QUERY_LIMITS, ...options.limits },
    cursorSecret:
      options.cursorSecret === undefined ? undefined : Secret.from(options.cursorSecret),
    estimateThreshold: options.estimateThreshold ?? 1_000,
    resource,
    withheld,
    record: recordMaker(fields, withheld, resource),
    rows: options.rows,
  }
  checkSearchAndLimits(definition)
  for (const [name, spec] of Object.entries(options.include ?? {})) {
    const relation = resolveRelation(definition, name, spec)
    if (!relationScopes) relation.readScope = undefined
    definition.relations.set(name, relation)
  }
  return definition
}

/** The search mode and limits a definition can serve, or a TypeError at start-up. */
function checkSearchAndLimits(definition: ListQueryDefinition): void {
  const { tableName } = definition
  const shapes = definition.limits.maxPreparedShapes
  if (!Number.isSafeInteger(shapes) || shapes < 0) {
    throw new TypeError(`defineListQuery(${tableName}): limits.maxPreparedShapes must be ≥ 0`)
  }
  if (typeof definition.searchMode === 'object' && !definition.primaryKey) {
    throw new TypeError(
      `defineListQuery(${tableName}): FTS5 search needs a single-column primary key (the FTS5 rowid)`,
    )
  }
  if (definition.searchMode === 'tsvector' && definition.dialect !== 'postgres') {
    throw new TypeError(`defineListQuery(${tableName}): searchMode 'tsvector' needs Postgres`)
  }
  if (!/^[a-z_]+$/.test(definition.searchLanguage)) {
    throw new TypeError(
      `defineListQuery(${tableName}): searchLanguage must be a configuration name`,
    )
  }
}

export function resolveRelation(
  definition: ListQueryDefinition,
  name: string,
  spec: RelationSpec,
): ResolvedRelation {
  const where = `defineListQuery(${definition.tableName}): include "${name}"`
  if (!/^[a-z][a-z0-9_]*$/i.test(name)) throw new TypeError(`${where} is not a valid name`)
  if (definition.columns.has(name)) throw new TypeError(`${where} has the name of a field`)
  const related = describeFields(spec.table)
  const find = (fields: QueryField[], column: Column, side: string) => {
    const field = fields.find((candidate) => candidate.column === column)
    if (!field) throw new TypeError(`${where}: its ${side} column is not a column of that table`)
    return field
  }
  const fields = related.filter((field) => !isSensitive(field))
  const order = orderKeyOf(spec.table, related, fields).fields
  if (order.length === 0) throw new TypeError(`${where}: the related table has nothing to order by`)
  return {
    name,
    kind: spec.kind,
    table: spec.table,
    local: find([...definition.columns.values()], spec.local, 'local'),
    remote: find(related, spec.remote, 'related'),
    fields,
    order,
    limit: spec.limit,
    readScope: defaultReadScope(spec.table),
  }
}

const underPolicy = new WeakMap<
  ResolvedRelation,
  { policy: ModelReadPolicy | undefined; ruled: ResolvedRelation }
>()

/**
 * The relation read under the related model's own policy, when it declared one: its read
 * scope, and only the fields it lets readers see (a field hidden from `GET /users` is hidden
 * from `include=author` too). Resolved on first use, so that resources may include each other
 * whatever order their modules load in.
 */
export function relationUnderPolicy(relation: ResolvedRelation): ResolvedRelation {
  if (relation.readScope === undefined) return relation
  const policy = readPolicyOf(relation.table)
  const cached = underPolicy.get(relation)
  if (cached && cached.policy === policy) return cached.ruled
  const ruled = policy
    ? {
        ...relation,
        readScope: policy.readScope,
        rows: policy.rows,
        // From every column: the related model may expose a field the default rule hides.
        fields: describeFields(relation.table).filter((field) => policy.readable.has(field.name)),
      }
    : relation
  underPolicy.set(relation, { policy, ruled })
  return ruled
}

/**
 * The condition of the resource's row filter (`rows`) for this caller, or undefined for every
 * row: the controller adds it to the `where` of show, update and delete, so that a record a
 * caller cannot list is a 404 to it everywhere.
 * @deprecated Public only for controllers generated by kiln 0.1 (`make:api --upgrade` moves
 * them to `defineResource`, whose operations call it); to leave `kilnjs/api` in the next minor.
 */
export function rowsWhere(
  definition: Pick<ListQueryDefinition, 'rows'>,
  caller: QueryCaller | undefined,
): SQL | undefined {
  return definition.rows?.(caller)?.where
}

/**
 * What makes an order total: the primary key (one column, or a composite key's columns in
 * their declared order), `keyed`; for a table without one, every comparable field of `shown`
 * (rows equal in all of them are duplicates anyway, and no hidden value enters an order).
 */
export function orderKeyOf(
  table: Table,
  all: QueryField[],
  shown: QueryField[],
): { fields: QueryField[]; keyed: boolean } {
  const single = all.filter((field) => field.column.primary)
  if (single.length > 0) return { fields: single, keyed: true }
  const config = is(table, PgTable)
    ? getPgTableConfig(table)
    : getSqliteTableConfig(table as SQLiteTable)
  // getTableConfig builds the columns of constraints separately: match them by name.
  const names = config.primaryKeys.flatMap((key) => key.columns.map((column) => column.name))
  const composite = names.flatMap((name) => all.filter((field) => field.name === name))
  if (composite.length > 0) return { fields: composite, keyed: true }
  return { fields: shown.filter((field) => field.kind !== 'other'), keyed: false }
}
