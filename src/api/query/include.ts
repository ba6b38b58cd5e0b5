import { and, type Column, getTableName, inArray, lte, type SQL, sql } from 'drizzle-orm'
import { mapEntry } from '../../core/map-entry.ts'
import type { Dialect } from '../../db/database.ts'
import type { QueryField, ResolvedRelation } from './definition.ts'
import { serializeFields } from './serialize.ts'
import { type PageStatement, prepareStatement } from './statement.ts'
import type { QueryDb, Row } from './types.ts'

/**
 * Loads one relation for a page of records in one query, whatever the page size (no N+1):
 * belongs-to by the page's foreign keys (`WHERE id IN (…)`), has-many by the page's keys with
 * at most `limit` related records per record (`row_number() OVER (PARTITION BY …)`), in the
 * order of the related table's key.
 * Returns, per page record, the related record (or null) or the list of related records.
 */
export async function loadRelation(
  db: QueryDb,
  relation: ResolvedRelation,
  rows: Row[],
  dialect: Dialect,
): Promise<unknown[]> {
  const keys = [...new Set(rows.map((row) => row[relation.local.key]).filter((k) => k != null))]
  const many = relation.kind === 'has-many'
  if (keys.length === 0) return rows.map(() => (many ? [] : null))
  const driverKeys = keys.map((key) => relation.remote.column.mapToDriverValue(key))
  const related: Row[] =
    relation.where === undefined && driverKeys.every(isPlainKey)
      ? await runRelationStatement(db, relation, dialect, driverKeys)
      : await relationQuery(db, relation, inArray(relation.remote.column, keys))
  const byKey = new Map<string, unknown[]>()
  for (const record of related) {
    const key = String(record[relation.remote.key])
    const list = byKey.get(key) ?? []
    list.push(serializeFields(relation.fields, record))
    byKey.set(key, list)
  }
  return rows.map((row) => {
    const found = byKey.get(String(row[relation.local.key])) ?? []
    return many ? found : (found[0] ?? null)
  })
}

/** A Drizzle selection of fields by their table property. */
export function selectionOf(fields: QueryField[]): Record<string, Column> {
  return Object.fromEntries(fields.map((field) => [field.key, field.column]))
}

/**
 * The relation's query for the keys `keys` selects: belongs-to by `WHERE key IN (…)`, has-many
 * ranked per parent (`row_number() OVER (PARTITION BY …)`) and cut at the relation's limit.
 */
function relationQuery(db: QueryDb, relation: ResolvedRelation, keys: SQL) {
  // The order's fields are read even when records do not show them (only `fields` are shown).
  const selection = selectionOf([...relation.fields, relation.remote, ...relation.order])
  if (relation.kind !== 'has-many') {
    return db.select(selection).from(relation.table).where(and(keys, relation.where))
  }
  const order = sql.join(
    relation.order.map((field) => sql`${field.column}`),
    sql`, `,
  )
  const rank = sql<number>`row_number() over (partition by ${relation.remote.column} order by ${order})`
  const ranked = db
    .select({ ...selection, kiln_rank: rank.as('kiln_rank') })
    .from(relation.table)
    .where(and(keys, relation.where))
    .as('kiln_ranked')
  return db
    .select()
    .from(ranked)
    .where(lte(ranked.kiln_rank as SQL, relation.limit))
    .orderBy(...relation.order.map((field) => ranked[field.key] as Column))
}

const statements = new WeakMap<object, WeakMap<ResolvedRelation, PageStatement>>()

/** Keys a statement takes as one array (Postgres) or one JSON text (SQLite). */
const isPlainKey = (key: unknown) => typeof key === 'string' || typeof key === 'number'

/**
 * The relation's query prepared once per database, its keys one parameter whatever their
 * number: `= any($1)` on Postgres, `IN (SELECT value FROM json_each(?))` on SQLite. Building
 * the select costs several times what running it does. A relation scoped per request (its own
 * `where`, as `crud_list`'s tenant scope) is built for its request instead.
 */
function runRelationStatement(
  db: QueryDb,
  relation: ResolvedRelation,
  dialect: Dialect,
  keys: unknown[],
): Promise<Row[]> {
  const byRelation = mapEntry(statements, db, () => new WeakMap())
  const statement = mapEntry(byRelation, relation, () => {
    const placeholder = sql.placeholder('kiln_keys')
    const column = relation.remote.column
    const match =
      dialect === 'postgres'
        ? sql`${column} = any(${placeholder})`
        : sql`${column} in (select value from json_each(${placeholder}))`
    const label = `${getTableName(relation.table)}_include`
    return prepareStatement(relationQuery(db, relation, match), dialect, label)
  })
  return statement.run({ kiln_keys: dialect === 'postgres' ? keys : JSON.stringify(keys) })
}
