import { type SQL, sql } from 'drizzle-orm'
import type { Dialect } from '../../db/database.ts'
import { type ColumnInfo, classifyColumn } from '../../db/models/columns.ts'
import type { ListQueryDefinition, QueryField } from '../query/definition.ts'
import { parseBigIntId, parseId, parseTextId, parseUuid } from '../rest/ids.ts'

/** Reads a record's `{id}` as its primary key holds it; one it cannot hold names no record (404). */
export type IdReader = (raw: string | undefined) => unknown

/** The `{id}` reader of a primary key: by its type and width (`parseId`, `parseUuid`…). */
export function idReaderOf(key: QueryField, dialect: Dialect): IdReader {
  const { info } = key
  const column = classifyColumn(info, dialect)
  if (info.dataType === 'integer' || info.dataType === 'number') {
    // A Postgres integer key is bounded by its width, so a larger id is a 404, not a 500.
    const max = column.bits === 32 ? 2_147_483_647 : column.bits === 16 ? 32_767 : undefined
    return (raw) => parseId(raw, column.kind === 'integer' && max ? { max } : {})
  }
  if (info.dataType === 'bigint') return parseBigIntId
  if (column.kind === 'uuid') return parseUuid
  return (raw) => parseTextId(raw, info.length === undefined ? {} : { maxLength: info.length })
}

/**
 * The value of a timestamp column at this write, from one clock: the database's `now()` on
 * Postgres (the clock `defaultNow()` reads; UTC for a timestamp without time zone, as Drizzle
 * reads it); on SQLite, which runs in this process, `now`, read once per request. Undefined
 * for a column that holds no time.
 */
export function timestampValue(
  column: ColumnInfo,
  dialect: Dialect,
  now: Date,
): SQL | Date | string | undefined {
  if (column.dataType !== 'date' && column.dataType !== 'string') return undefined
  if (dialect === 'postgres') {
    return classifyColumn(column, dialect).withTimeZone ? sql`now()` : sql`now() at time zone 'utc'`
  }
  return column.dataType === 'date' ? now : now.toISOString()
}

/** What a resource's writes stamp: `updated_at` on every write, both timestamps on create. */
export interface Timestamps {
  /** The values a create sets (none when the database fills both), by table property. */
  created(now: Date): Record<string, unknown>
  /** The value an update sets, by table property (none without `updated_at`). */
  updated(now: Date): Record<string, unknown>
}

/**
 * The timestamps of a resource, as Laravel's models keep them: `updated_at` on each update;
 * on create, when the database fills either one not, both from one reading of one clock (so
 * `updated_at` never differs from `created_at` on create).
 */
export function timestampsOf(definition: ListQueryDefinition): Timestamps {
  const find = (name: string, key: string) =>
    [...definition.columns.values()].find((f) => f.name === name || f.key === key)
  const timed = (field: QueryField | undefined) =>
    field && timestampValue(field.info, definition.dialect, new Date()) !== undefined ? [field] : []
  const updatedAt = timed(find('updated_at', 'updatedAt'))
  const both = [...timed(find('created_at', 'createdAt')), ...updatedAt]
  const stamped = both.some((field) => !field.info.hasDefault) ? both : []
  const values = (fields: QueryField[], now: Date) =>
    Object.fromEntries(
      fields.map((f) => [f.key, timestampValue(f.info, definition.dialect, now)] as const),
    )
  return {
    created: (now) => values(stamped, now),
    updated: (now) => values(updatedAt, now),
  }
}
