import type { Dialect } from '../../../db/database.ts'
import type { ColumnInfo } from '../../../db/models/columns.ts'

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

export const INT32 = /^(integer|int|int4|serial|serial4)$/i
const INT16 = /^(smallint|int2|smallserial|serial2)$/i

/**
 * The zod expression validating a column in a create/update request, without `.optional()`:
 * types from the column, length bounds of varchar/text(n), e-mail format for e-mail-like
 * names, a minimum length for password-like ones, `min(1)` for required text, `.nullable()`
 * for nullable columns.
 */
export function requestSchema(column: ColumnInfo, dialect: Dialect): string {
  let expr = baseRequestSchema(column, dialect)
  if (column.nullable) expr += '.nullable()'
  return expr
}

function baseRequestSchema(column: ColumnInfo, dialect: Dialect): string {
  const sqlType = column.sqlType.toLowerCase()
  switch (column.dataType) {
    case 'string': {
      if (column.enumValues) return `z.enum(${JSON.stringify(column.enumValues)})`
      if (sqlType === 'uuid') return 'z.uuid()'
      if (sqlType === 'date') return 'z.iso.date()'
      if (sqlType.startsWith('timestamp')) return 'z.iso.datetime({ offset: true })'
      if (sqlType.startsWith('time')) return 'z.iso.time()'
      if (/^(numeric|decimal)/.test(sqlType)) return 'z.string().regex(/^-?\\d+(\\.\\d+)?$/)'
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
      if (dialect === 'sqlite') return 'z.int()'
      if (INT32.test(sqlType)) return 'z.int32()'
      if (INT16.test(sqlType)) return 'z.int().min(-32768).max(32767)'
      return 'z.int()'
    case 'number':
      return 'z.number()'
    case 'bigint':
      return 'z.string().regex(/^-?\\d{1,19}$/).transform(BigInt)'
    case 'boolean':
      return 'z.boolean()'
    case 'date':
      if (sqlType === 'date') return 'z.iso.date().transform((value) => new Date(value))'
      return 'z.iso.datetime({ offset: true }).transform((value) => new Date(value))'
    case 'buffer':
      return "z.base64().transform((value) => Buffer.from(value, 'base64'))"
    case 'array':
      return 'z.array(z.unknown())'
    default:
      return 'z.unknown()'
  }
}

/** The zod expression documenting a column in a resource (what the API returns). */
export function resourceSchema(column: ColumnInfo): string {
  const sqlType = column.sqlType.toLowerCase()
  let expr: string
  switch (column.dataType) {
    case 'string':
      expr = column.enumValues ? `z.enum(${JSON.stringify(column.enumValues)})` : 'z.string()'
      break
    case 'integer':
      expr = 'z.int()'
      break
    case 'number':
      expr = 'z.number()'
      break
    case 'bigint':
      expr = 'z.string()'
      break
    case 'boolean':
      expr = 'z.boolean()'
      break
    case 'date':
      expr = sqlType === 'date' ? 'z.iso.date()' : 'z.iso.datetime()'
      break
    case 'buffer':
      expr = 'z.base64()'
      break
    case 'array':
      expr = 'z.array(z.unknown())'
      break
    default:
      expr = 'z.unknown()'
  }
  return column.nullable ? `${expr}.nullable()` : expr
}

/** The expression converting `row.<key>` to its JSON value in a resource. */
export function resourceValue(column: ColumnInfo, row: string): string {
  const value = `${row}.${column.key}`
  const sqlType = column.sqlType.toLowerCase()
  const convert = (v: string): string | undefined => {
    switch (column.dataType) {
      case 'date':
        return sqlType === 'date' ? `${v}.toISOString().slice(0, 10)` : `${v}.toISOString()`
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
    return `${value}?.toISOString()${sqlType === 'date' ? '.slice(0, 10)' : ''} ?? null`
  return `${value} === null ? null : ${converted}`
}
