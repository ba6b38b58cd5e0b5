import type { Dialect } from '../../../db/database.ts'
import { type ColumnInfo, classifyColumn } from '../../../db/models/columns.ts'

/** A column name that asks for an e-mail address: `email`, `contact_email`, `emailAddress`. */
export function isEmailLike(column: ColumnInfo): boolean {
  return /(^|_)e_?mail(_address)?$/i.test(column.name) || /e[-_]?mail(Address)?$/i.test(column.key)
}

/** A column that takes a password or a secret typed by a person. */
export function isPasswordLike(column: ColumnInfo): boolean {
  return /password|passphrase/i.test(column.name)
}

/** The smallest accepted password length. */
export const MIN_PASSWORD_LENGTH = 8
/** The longest accepted password: hashing is slow on purpose, so bound its input. */
export const MAX_PASSWORD_LENGTH = 256

const PLAIN_ELEMENTS = new Set(['string', 'integer', 'number', 'boolean'])

/**
 * Columns validated as any JSON value, typed by the column's TypeScript type: JSON columns
 * (their `$type<T>()` exists only in TypeScript) and arrays of values that need conversion.
 */
function isJson(column: ColumnInfo): boolean {
  if (column.dataType === 'array') return !PLAIN_ELEMENTS.has(column.element?.dataType ?? '')
  return column.dataType === 'json'
}

/**
 * The zod expression validating a column in a create/update request, without `.optional()`:
 * types from the column (precision and scale of numerics, 64-bit bigints, element types of
 * arrays), length bounds of varchar/text(n), e-mail format for e-mail-like names, a minimum
 * length for password-like ones, `min(1)` for required text, `.nullable()` for nullable
 * columns. `insertType` names the table's insert type, for JSON columns typed with `$type`.
 */
export function requestSchema(
  column: ColumnInfo,
  dialect: Dialect,
  insertType: string,
  table: string,
): string {
  // Given the column, `jsonValue` checks writes with the schema `typedJson` attached to it.
  if (column.dataType === 'json') {
    return `jsonValue<${insertType}['${column.key}']>(${table}.${column.key})`
  }
  if (isJson(column)) return `jsonValue<${insertType}['${column.key}']>()`
  const expr = baseRequestSchema(column, dialect)
  return column.nullable ? `${expr}.nullable()` : expr
}

function baseRequestSchema(column: ColumnInfo, dialect: Dialect): string {
  const kind = classifyColumn(column, dialect)
  if (kind.kind === 'numeric') {
    const { precision, scale } = kind
    const decimal =
      precision === undefined
        ? 'decimal()'
        : `decimal({ precision: ${precision}, scale: ${scale} })`
    if (column.dataType === 'number') return `${decimal}.transform(Number)`
    if (column.dataType === 'bigint') return `${decimal}.transform(BigInt)`
    return decimal
  }
  switch (column.dataType) {
    case 'string': {
      if (column.enumValues) return `z.enum(${enumLiteral(column.enumValues)})`
      if (kind.kind === 'uuid') return 'uuid()'
      if (kind.kind === 'date') return 'z.iso.date()'
      if (kind.kind === 'timestamp') {
        return kind.withTimeZone
          ? 'z.iso.datetime({ offset: true })'
          : 'z.iso.datetime({ local: true })'
      }
      if (kind.kind === 'time') return 'z.iso.time()'
      let expr = isEmailLike(column) ? 'z.email()' : 'z.string()'
      const min = isPasswordLike(column)
        ? MIN_PASSWORD_LENGTH
        : !column.nullable && !column.hasDefault && !isEmailLike(column)
          ? 1
          : undefined
      if (min !== undefined) expr += `.min(${min})`
      if (column.length !== undefined) expr += `.max(${column.length})`
      return expr
    }
    case 'integer':
      // SQLite integers are 64-bit; Postgres integer/serial are 32-bit.
      if (kind.bits === 32) return 'z.int32()'
      if (kind.bits === 16) return 'z.int().min(-32768).max(32767)'
      return 'z.int()'
    case 'number':
      // A Postgres `real` is a 4-byte float: larger magnitudes are out of its range.
      return kind.kind === 'float' && kind.bits === 32
        ? 'z.number().min(-3.4e38).max(3.4e38)'
        : 'z.number()'
    case 'bigint':
      return 'int64()'
    case 'boolean':
      return 'z.boolean()'
    case 'date':
      if (kind.kind === 'date') return 'z.iso.date().transform((value) => new Date(value))'
      return 'z.iso.datetime({ offset: true }).transform((value) => new Date(value))'
    case 'buffer':
      return "z.base64().transform((value) => Buffer.from(value, 'base64'))"
    case 'array':
      return `z.array(${baseRequestSchema(column.element!, dialect)})`
    default:
      return 'z.unknown()'
  }
}

/** The zod expression documenting a column in a resource (what the API returns). */
export function resourceSchema(column: ColumnInfo, table: string): string {
  // The schema `typedJson` attached, if any; `jsonValue` adds `.nullable()` itself.
  if (column.dataType === 'json') return `jsonValue(${table}.${column.key})`
  // Any JSON value includes null: `.nullable()` would add `nullable` without a `type`.
  if (isJson(column) || column.dataType === 'custom') return 'z.unknown()'
  const expr = baseResourceSchema(column)
  return column.nullable ? `${expr}.nullable()` : expr
}

function baseResourceSchema(column: ColumnInfo): string {
  const isDate = classifyColumn(column).kind === 'date'
  switch (column.dataType) {
    case 'string':
      if (column.enumValues) return `z.enum(${enumLiteral(column.enumValues)})`
      return classifyColumn(column).kind === 'uuid' ? 'uuid()' : 'z.string()'
    case 'integer':
      return 'z.int()'
    case 'number':
      return 'z.number()'
    case 'bigint':
      return 'z.string()'
    case 'boolean':
      return 'z.boolean()'
    case 'date':
      return isDate ? 'z.iso.date()' : 'z.iso.datetime()'
    case 'buffer':
      return 'z.base64()'
    case 'array':
      return `z.array(${baseResourceSchema(column.element!)})`
    default:
      return 'z.unknown()'
  }
}

/** The expression converting `row.<key>` to its JSON value in a resource. */
export function resourceValue(column: ColumnInfo, row: string): string {
  const value = `${row}.${column.key}`
  const isDate = classifyColumn(column).kind === 'date'
  const convert = (v: string): string | undefined => {
    switch (column.dataType) {
      case 'date':
        return isDate ? `${v}.toISOString().slice(0, 10)` : `${v}.toISOString()`
      case 'bigint':
        return `String(${v})`
      case 'buffer':
        return `${v}.toString('base64')`
      default:
        return undefined
    }
  }
  const converted = convert(value)
  if (converted === undefined) return value
  if (!column.nullable) return converted
  if (column.dataType === 'date')
    return `${value}?.toISOString()${isDate ? '.slice(0, 10)' : ''} ?? null`
  return `${value} === null ? null : ${converted}`
}

/** `['a', 'b']`, quoted as the formatter writes strings. */
function enumLiteral(values: string[]): string {
  return `[${values.map((value) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`).join(', ')}]`
}
