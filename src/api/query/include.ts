import { and, type Column, inArray, lte, type SQL, sql } from 'drizzle-orm'
import type { QueryField, ResolvedRelation } from './definition.ts'
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
): Promise<unknown[]> {
  const keys = [...new Set(rows.map((row) => row[relation.local.key]).filter((k) => k != null))]
  const many = relation.kind === 'has-many'
  if (keys.length === 0) return rows.map(() => (many ? [] : null))
  // The order's fields are read even when records do not show them (only `fields` are shown).
  const selection = selectionOf([...relation.fields, relation.remote, ...relation.order])
  let related: Row[]
  if (!many) {
    related = await db
      .select(selection)
      .from(relation.table)
      .where(and(inArray(relation.remote.column, keys), relation.where))
  } else {
    const order = sql.join(
      relation.order.map((field) => sql`${field.column}`),
      sql`, `,
    )
    const rank = sql<number>`row_number() over (partition by ${relation.remote.column} order by ${order})`
    const ranked = db
      .select({ ...selection, kiln_rank: rank.as('kiln_rank') })
      .from(relation.table)
      .where(and(inArray(relation.remote.column, keys), relation.where))
      .as('kiln_ranked')
    related = await db
      .select()
      .from(ranked)
      .where(lte(ranked.kiln_rank as SQL, relation.limit))
      .orderBy(...relation.order.map((field) => ranked[field.key] as Column))
  }
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
