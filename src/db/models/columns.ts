import { type Column, is } from 'drizzle-orm'
import { PgArray, PgChar, PgVarchar } from 'drizzle-orm/pg-core'
import { SQLiteText } from 'drizzle-orm/sqlite-core'
import type { z } from 'zod'
import type { Dialect } from '../database.ts'
import { jsonSchemaOf } from './json-schemas.ts'

/**
 * The JavaScript kind of a column's values, from Drizzle's `dataType` and `columnType`:
 * `integer` for whole numbers kept in a JS number, `number` for floating point, `date` for
 * `Date` values, `json` for parsed JSON. `custom` covers custom and exotic column types.
 */
export type ColumnDataType =
  | 'string'
  | 'integer'
  | 'number'
  | 'bigint'
  | 'boolean'
  | 'date'
  | 'json'
  | 'buffer'
  | 'array'
  | 'custom'

export interface ColumnInfo {
  /** The column's name in the database (`created_at`). */
  name: string
  /** The property of the Drizzle table (`createdAt`). */
  key: string
  /** The SQL type as Drizzle writes it (`varchar(200)`, `bigserial`, `integer`). */
  sqlType: string
  dataType: ColumnDataType
  nullable: boolean
  /** The database or Drizzle fills the value when it is not given (auto-increment and generated columns included). */
  hasDefault: boolean
  /** Part of the table's primary key. */
  primaryKey: boolean
  /** The database assigns the value: serial/identity on Postgres, INTEGER PRIMARY KEY on SQLite. */
  autoIncrement: boolean
  /** The maximum length of varchar/char/text(n) columns. */
  length?: number
  /** The allowed values of enum columns. */
  enumValues?: string[]
  /** What a Postgres array column holds (`text[]` → a `string` column). */
  element?: ColumnInfo
  /** The zod schema `typedJson` attached to a JSON column: every write is checked against it. */
  jsonSchema?: z.ZodType
}

const INTEGER_COLUMN_TYPES = new Set([
  'PgInteger',
  'PgSmallInt',
  'PgSerial',
  'PgSmallSerial',
  'PgBigInt53',
  'PgBigSerial53',
  'SQLiteInteger',
])

const SERIAL_COLUMN_TYPES = new Set(['PgSerial', 'PgSmallSerial', 'PgBigSerial53', 'PgBigSerial64'])

function dataTypeOf(column: Column): ColumnDataType {
  switch (column.dataType) {
    case 'number':
      return INTEGER_COLUMN_TYPES.has(column.columnType) ? 'integer' : 'number'
    case 'string':
    case 'bigint':
    case 'boolean':
    case 'date':
    case 'json':
    case 'buffer':
    case 'array':
      return column.dataType
    default:
      return 'custom'
  }
}

function lengthOf(column: Column): number | undefined {
  if (is(column, PgVarchar) || is(column, PgChar) || is(column, SQLiteText)) {
    return typeof column.length === 'number' ? column.length : undefined
  }
  return undefined
}

function isAutoIncrement(column: Column, dialect: Dialect, singlePrimaryKey: boolean): boolean {
  if (dialect === 'postgres') {
    return SERIAL_COLUMN_TYPES.has(column.columnType) || column.generatedIdentity !== undefined
  }
  // In SQLite an INTEGER PRIMARY KEY is the rowid: the database assigns it.
  return singlePrimaryKey && column.primary && column.columnType === 'SQLiteInteger'
}

/** Describes one column of a table. `inPrimaryKey` covers composite primary keys. */
export function describeColumn(
  key: string,
  column: Column,
  dialect: Dialect,
  options: { inPrimaryKey: boolean; singlePrimaryKey: boolean },
): ColumnInfo {
  const autoIncrement = isAutoIncrement(column, dialect, options.singlePrimaryKey)
  const info: ColumnInfo = {
    name: column.name,
    key,
    sqlType: column.getSQLType(),
    dataType: dataTypeOf(column),
    nullable: !column.notNull,
    hasDefault: column.hasDefault || autoIncrement || column.generated !== undefined,
    primaryKey: column.primary || options.inPrimaryKey,
    autoIncrement,
  }
  const length = lengthOf(column)
  if (length !== undefined) info.length = length
  if (column.enumValues && column.enumValues.length > 0) info.enumValues = [...column.enumValues]
  const jsonSchema = jsonSchemaOf(column)
  if (jsonSchema) info.jsonSchema = jsonSchema
  if (is(column, PgArray)) {
    info.element = describeColumn(key, column.baseColumn, dialect, {
      inPrimaryKey: false,
      singlePrimaryKey: false,
    })
  }
  return info
}
