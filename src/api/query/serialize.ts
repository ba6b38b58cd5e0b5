import type { FieldNames, Row } from './types.ts'
import { toJsonValue } from './values.ts'

/** A row as a record of the API: wire names, JSON values, only the given fields. */
export function serializeFields(fields: readonly FieldNames[], row: Row): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const field of fields) out[field.name] = toJsonValue(row[field.key])
  return out
}
