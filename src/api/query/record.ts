import { serializeFields } from './serialize.ts'
import type { FieldNames, Row } from './types.ts'

/**
 * The names a record never shows: every column the list query's `fields` leave out (credential
 * columns among them), by wire name and by the table's property name.
 */
export function withheldNames(
  columns: Iterable<FieldNames>,
  fields: readonly FieldNames[],
): string[] {
  const shown = new Set(fields)
  const names = new Set<string>()
  for (const field of columns) {
    if (shown.has(field)) continue
    names.add(field.name)
    names.add(field.key)
  }
  // A shown field's wire name is never withheld, even where it is another column's property.
  for (const field of fields) names.delete(field.name)
  return [...names]
}

/**
 * Makes a row into the record a reader gets: the resource's (`resource`) when there is one,
 * else the fields column by column. Either way the list query's `fields` have the last word: a
 * column they leave out is taken off what the resource returned, so hiding a field is one edit
 * to `fields`, whatever the resource shows. Values the resource computes (names that are no
 * column) pass. A resource that shows no withheld column, the usual case, is returned as is.
 */
export function recordMaker(
  fields: readonly FieldNames[],
  withheld: readonly string[],
  resource: ((row: never) => object) | undefined,
): (row: Row) => Record<string, unknown> {
  if (!resource) return (row) => serializeFields(fields, row)
  const make = resource as (row: Row) => Record<string, unknown>
  if (withheld.length === 0) return make
  return (row) => {
    const record = make(row)
    return withheld.some((name) => Object.hasOwn(record, name)) ? without(record, withheld) : record
  }
}

function without(record: Record<string, unknown>, names: readonly string[]) {
  const kept: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(record)) {
    if (!names.includes(name)) kept[name] = value
  }
  return kept
}
