import { createHash } from 'node:crypto'
import { and, type Column, getTableName, inArray, lte, type SQL, sql } from 'drizzle-orm'
import type { QueryField, ResolvedRelation } from './definition.ts'
import { compileRowMapper } from './row-mapper.ts'
import type { QueryDb, Row } from './run.ts'
import { serializeFields } from './serialize.ts'

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
  dialect: 'postgres' | 'sqlite',
): Promise<unknown[]> {
  const keys = [...new Set(rows.map((row) => row[relation.local.key]).filter((k) => k != null))]
  const many = relation.kind === 'has-many'
  if (keys.length === 0) return rows.map(() => (many ? [] : null))
  const driverKeys = keys.map((key) => relation.remote.column.mapToDriverValue(key))
  const related: Row[] =
    relation.where === undefined && driverKeys.every(isPlainKey)
      ? await relationStatement(db, relation, dialect).run(driverKeys)
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

interface RelationStatement {
  run(keys: unknown[]): Promise<Row[]>
}

const statements = new WeakMap<object, WeakMap<ResolvedRelation, RelationStatement>>()

/** Keys a statement takes as one array (Postgres) or one JSON text (SQLite). */
const isPlainKey = (key: unknown) => typeof key === 'string' || typeof key === 'number'

/**
 * The relation's query prepared once per database, its keys one parameter whatever their
 * number: `= any($1)` on Postgres (a named statement, planned once per connection),
 * `IN (SELECT value FROM json_each(?))` on SQLite. Building the select costs several times
 * what running it does. A relation scoped per request (its own `where`, as `crud_list`'s tenant
 * scope) is built for its request instead.
 */
function relationStatement(
  db: QueryDb,
  relation: ResolvedRelation,
  dialect: 'postgres' | 'sqlite',
): RelationStatement {
  let byRelation = statements.get(db)
  if (!byRelation) {
    byRelation = new WeakMap()
    statements.set(db, byRelation)
  }
  const known = byRelation.get(relation)
  if (known) return known
  const keys = sql.placeholder('kiln_keys')
  const column = relation.remote.column
  const query = relationQuery(
    db,
    relation,
    dialect === 'postgres'
      ? sql`${column} = any(${keys})`
      : sql`${column} in (select value from json_each(${keys}))`,
  )
  let statement: RelationStatement
  if (dialect === 'postgres') {
    const digest = createHash('sha256').update(query.toSQL().sql).digest('hex').slice(0, 16)
    const table = getTableName(relation.table).slice(0, 32)
    const prepared = query.prepare(`kiln_${table}_include_${digest}`)
    compileRowMapper(prepared)
    statement = { run: (values) => prepared.execute({ kiln_keys: values }) }
  } else {
    const prepared = query.prepare()
    compileRowMapper(prepared)
    statement = { run: async (values) => prepared.all({ kiln_keys: JSON.stringify(values) }) }
  }
  byRelation.set(relation, statement)
  return statement
}
