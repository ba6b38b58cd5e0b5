import { Column, is, SQL } from 'drizzle-orm'
import type { Row } from './types.ts'

/** What Drizzle's prepared queries hold of their selection: each field and its result key. */
interface SelectedField {
  path: string[]
  field: unknown
}

interface Decoder {
  mapFromDriverValue(value: unknown): unknown
}

/** A prepared Drizzle query, as far as the mapper is concerned (every driver's has both). */
interface MappableStatement {
  fields?: SelectedField[]
  customResultMapper?: (rows: unknown[][]) => unknown
}

/**
 * Gives a prepared page statement a row mapper compiled once from its selection, in place of
 * Drizzle's generic one. For every row, Drizzle's `mapResultRow` asks each field what kind it
 * is (column, SQL, alias) and walks its result path with an iterator; a page of 20 rows of 8
 * columns asked 160 times per request, about 5% of a list request's CPU
 * (docs/performance-archive.md, "Query grammar at 10^6 rows").
 * The compiled mapper keeps the answers: one decoder and one key per field, then a plain loop.
 * Values are decoded by the same `mapFromDriverValue` as before, so rows are identical.
 *
 * Only flat selections are compiled (each field at the top of the row), which is what a list
 * page selects: Drizzle's handling of joined tables (`joinsNotNullableMap`) only concerns
 * nested paths, so a statement with any keeps Drizzle's mapper.
 */
export function compileRowMapper(statement: object): void {
  const target = statement as MappableStatement
  const fields = target.fields
  if (!Array.isArray(fields) || target.customResultMapper) return
  const keys: string[] = []
  const decoders: Decoder[] = []
  for (const { path, field } of fields) {
    const decoder = decoderOf(field)
    if (path.length !== 1 || decoder === undefined) return
    keys.push(path[0] as string)
    decoders.push(decoder)
  }
  const width = keys.length
  target.customResultMapper = (rows) => {
    const records: Row[] = new Array(rows.length)
    for (let r = 0; r < rows.length; r++) {
      const values = rows[r] as unknown[]
      const record: Row = {}
      for (let i = 0; i < width; i++) {
        const value = values[i]
        record[keys[i] as string] =
          value === null ? null : (decoders[i] as Decoder).mapFromDriverValue(value)
      }
      records[r] = record
    }
    return records
  }
}

/**
 * The decoder Drizzle's `mapResultRow` would pick for a column or an SQL field (whose decoder
 * Drizzle's types keep internal: `sql<T>\`…\`.mapWith()` sets it).
 */
function decoderOf(field: unknown): Decoder | undefined {
  if (is(field, Column)) return field
  if (is(field, SQL)) return (field as unknown as { decoder: Decoder }).decoder
  if (is(field, SQL.Aliased)) return (field.sql as unknown as { decoder: Decoder }).decoder
  return undefined
}
