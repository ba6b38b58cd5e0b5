import { FieldValueError } from '../../core/errors.ts'
import type { Dialect } from '../../db/database.ts'
import { type ColumnInfo, classifyColumn, UUID_PATTERN } from '../../db/models/columns.ts'

/**
 * How a column's values are read from a query string, compared and written back into a
 * cursor. `other` covers JSON, binary, arrays and types kiln cannot check: such columns can
 * be selected but never filtered or sorted on.
 */
export type FieldKind =
  | 'text'
  | 'enum'
  | 'uuid'
  | 'integer'
  | 'number'
  | 'decimal'
  | 'bigint'
  | 'boolean'
  | 'timestamp'
  | 'date-string'
  | 'timestamp-string'
  | 'other'

/** The list grammar's reading of `classifyColumn`: how its values travel decides the kind. */
export function fieldKindOf(column: ColumnInfo): FieldKind {
  const { kind } = classifyColumn(column)
  switch (kind) {
    case 'enum':
    case 'boolean':
    case 'text':
    case 'uuid':
    case 'bigint':
      return kind
    case 'integer':
      return 'integer'
    case 'float':
      return 'number'
    case 'numeric':
      if (column.dataType === 'bigint') return 'bigint'
      return column.dataType === 'number' || column.dataType === 'string' ? 'decimal' : 'other'
    case 'date':
      return column.dataType === 'date' ? 'timestamp' : 'date-string'
    case 'timestamp':
      return column.dataType === 'date' ? 'timestamp' : 'timestamp-string'
    default:
      return 'other'
  }
}

/**
 * A column the filters read by structure rather than by order: a PostgreSQL array of comparable
 * elements (`text[]`, `integer[]`), or a JSON column (`json`/`jsonb`, SQLite's JSON text), whose
 * paths compare as text and which, holding an array, takes `contains`/`overlaps` too.
 */
export type FieldStructure = 'array' | 'json'

export function structureOf(column: ColumnInfo): FieldStructure | undefined {
  if (column.dataType === 'array') {
    const element = column.element
    return element && element.dataType !== 'array' && fieldKindOf(element) !== 'other'
      ? 'array'
      : undefined
  }
  // A blob holding JSON is not text SQLite's JSON functions read.
  if (column.dataType === 'json' && classifyColumn(column).textual) return 'json'
  return undefined
}

/** Kinds that `sum` and `avg` take. */
export function isNumericKind(kind: FieldKind): boolean {
  return kind === 'integer' || kind === 'number' || kind === 'decimal' || kind === 'bigint'
}

const INTEGER = /^-?[0-9]{1,20}$/
const NUMBER = /^-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]{1,3})?$/
const DATE = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/
const DATE_TIME =
  /^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?(Z|[+-][0-9]{2}(:?[0-9]{2})?)?)?$/
const INT64_MAX = 9223372036854775807n

/**
 * Reads one query-string value as a value of the field's column, as Drizzle binds it:
 * a number, a bigint, a boolean, a `Date` for timestamps, a checked string otherwise.
 * Throws `FieldValueError` for anything the database would reject, so a bad value is a 422
 * and never reaches SQL.
 */
export function parseFieldValue(
  kind: FieldKind,
  column: ColumnInfo,
  raw: string,
  options: { enumValues?: readonly string[]; dialect?: Dialect } = {},
): unknown {
  const { enumValues, dialect } = options
  switch (kind) {
    case 'text':
      return raw
    case 'enum': {
      const allowed = enumValues ?? column.enumValues ?? []
      if (!allowed.includes(raw)) throw new FieldValueError(`must be one of ${allowed.join(', ')}`)
      return raw
    }
    case 'uuid':
      if (!UUID_PATTERN.test(raw)) throw new FieldValueError('must be a UUID')
      return raw
    case 'integer':
      return parseInteger(column, raw, dialect)
    case 'number': {
      const value = NUMBER.test(raw) ? Number(raw) : Number.NaN
      if (!Number.isFinite(value)) throw new FieldValueError('must be a number')
      return value
    }
    case 'decimal':
      if (!NUMBER.test(raw) || raw.length > 60) throw new FieldValueError('must be a number')
      return column.dataType === 'number' ? Number(raw) : raw
    case 'bigint': {
      if (!INTEGER.test(raw)) throw new FieldValueError('must be a whole number')
      const value = BigInt(raw)
      if (value > INT64_MAX || value < -INT64_MAX - 1n) throw new FieldValueError('is out of range')
      return value
    }
    case 'boolean':
      if (raw === 'true' || raw === '1') return true
      if (raw === 'false' || raw === '0') return false
      throw new FieldValueError('must be true or false')
    case 'timestamp':
      return parseTimestamp(raw)
    case 'timestamp-string':
      return parseTimestamp(raw).toISOString()
    case 'date-string':
      if (!isCalendarDate(raw)) throw new FieldValueError('must be a date (YYYY-MM-DD)')
      return raw
    default:
      throw new FieldValueError('cannot be compared')
  }
}

function parseInteger(column: ColumnInfo, raw: string, dialect: Dialect | undefined): number {
  const value = INTEGER.test(raw) ? Number(raw) : Number.NaN
  if (!Number.isSafeInteger(value)) throw new FieldValueError('must be a whole number')
  // The dialect decides the width: every SQLite integer is 64-bit.
  const { bits } = classifyColumn(column, dialect)
  const bound = bits === 16 || bits === 32 ? 2 ** (bits - 1) : 0
  if (bound > 0 && (value >= bound || value < -bound)) throw new FieldValueError('is out of range')
  return value
}

function parseTimestamp(raw: string): Date {
  if (!DATE_TIME.test(raw)) throw new FieldValueError('must be an ISO 8601 date or date-time')
  const [datePart] = raw.split(/[T ]/, 1)
  if (!isCalendarDate(datePart!)) throw new FieldValueError('must be a valid date')
  // Without an offset, a date-time is read as UTC (the API writes every time in UTC).
  // Offsets may be written +02, +0200 or +02:00 (Postgres prints +00); JS reads only +02:00.
  const offset = /([+-][0-9]{2}):?([0-9]{2})?$/.exec(raw.slice(10))
  const zoned = offset
    ? `${raw.slice(0, raw.length - offset[0].length)}${offset[1]}:${offset[2] ?? '00'}`
    : raw.endsWith('Z')
      ? raw
      : `${raw}Z`
  const value = new Date(raw.length === 10 ? `${raw}T00:00:00Z` : zoned.replace(' ', 'T'))
  const year = value.getUTCFullYear()
  if (Number.isNaN(value.getTime()) || year < 1 || year > 9999) {
    throw new FieldValueError('must be a valid date')
  }
  return value
}

function isCalendarDate(raw: string): boolean {
  const match = DATE.exec(raw)
  if (!match) return false
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  if (year < 1 || month < 1 || month > 12 || day < 1) return false
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate()
}

/** A value as JSON: dates as ISO 8601, bigints as strings, bytes as base64. */
export function toJsonValue(value: unknown): unknown {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString()
  if (typeof value === 'bigint') return value.toString()
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64')
  return value
}
