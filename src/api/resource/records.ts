import { and, eq, isNull, type SQL, sql } from 'drizzle-orm'
import type { PostgresDb, SqliteDb } from '../../db/database.ts'
import { type QueryCaller, type QueryField, rowsWhere } from '../query/definition.ts'
import type { ResourceDefinition } from './define.ts'
import { type IdReader, idReaderOf } from './values.ts'

/**
 * One loose view of either dialect's Drizzle database: the builders differ by dialect in their
 * types only, and one code path serves both.
 */
// biome-ignore lint/suspicious/noExplicitAny: either dialect's Drizzle database builds these statements
export type AnyDb = any

/** How a resource's operations find one record, by its `{id}`, among the caller's rows. */
export interface RecordLookup {
  key: QueryField
  readId: IdReader
  /** The record `id` among the rows the caller may reach (row filter, not in the trash). */
  byId(id: unknown, caller: QueryCaller | undefined): SQL
  /** The record as the caller may read it: by a prepared query when no row filter applies. */
  find(id: unknown, caller: QueryCaller | undefined): Promise<Record<string, unknown> | undefined>
}

/**
 * The lookup of a resource's records. The show query is prepared on the first request, then
 * reused (a request only binds its id); not at start-up: SQLite reads the table to prepare,
 * and an app started before its migrations ran answers 503 until they do.
 */
export function recordLookup(
  resource: ResourceDefinition,
  db: PostgresDb | SqliteDb,
): RecordLookup {
  const key = resource.primaryKey
  if (!key) {
    throw new TypeError(`${resource.tableName}: its operations need a single-column primary key`)
  }
  const { table, softDelete } = resource
  const live = (id: unknown) =>
    softDelete ? and(eq(key.column, id), isNull(softDelete.column))! : eq(key.column, id)
  const byId = (id: unknown, caller: QueryCaller | undefined) =>
    and(live(id), rowsWhere(resource, caller))!
  const loose = db as AnyDb
  let prepared: AnyDb
  const prepare = () => {
    const query = loose
      .select()
      .from(table)
      .where(live(sql.placeholder('id')))
    // Postgres names prepared statements per connection; SQLite's are anonymous.
    return resource.dialect === 'postgres'
      ? query.prepare(`kiln_${resource.tableName}_show`)
      : query.prepare()
  }
  return {
    key,
    readId: idReaderOf(key, resource.dialect),
    byId,
    async find(id, caller) {
      if (resource.rows) {
        const [row] = await loose.select().from(table).where(byId(id, caller))
        return row
      }
      prepared ??= prepare()
      const [row] =
        resource.dialect === 'postgres' ? await prepared.execute({ id }) : prepared.all({ id })
      return row
    },
  }
}
