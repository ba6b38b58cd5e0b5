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

/**
 * One column of a model, read once from its Drizzle table: what a `ModelInfo` lists in
 * `columns`, and what the scaffold, the REST query grammar and the MCP tools decide by
 * (docs/models.md).
 */
export interface ColumnInfo {
  /** The column's name in the database (`created_at`). */
  name: string
  /** The property of the Drizzle table (`createdAt`). */
  key: string
  /** The SQL type as Drizzle writes it (`varchar(200)`, `bigserial`, `integer`). */
  sqlType: string
  /** The kind of value the column holds in JavaScript. */
  dataType: ColumnDataType
  /** The column accepts NULL. */
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

/**
 * What a column stores, read from its SQL type and Drizzle's `dataType`: the one reading every
 * part of kiln uses (the list grammar, the generated requests, the data tools). Drizzle's
 * `dataType` says how a value travels in JavaScript; the kind says what the database keeps, so a
 * `numeric(10, 2)` is `numeric` in every mode and a `date` column is `date` whether it is read as
 * a string or a `Date`. `other` covers the types kiln cannot check (`interval`, `inet`, custom
 * types): a value passes through as it is.
 */
export type ColumnKind =
  | 'integer'
  | 'bigint'
  | 'numeric'
  | 'float'
  | 'boolean'
  | 'text'
  | 'uuid'
  | 'enum'
  | 'date'
  | 'time'
  | 'timestamp'
  | 'json'
  | 'array'
  | 'bytes'
  | 'other'

/** A column's classification: its kind, and the details of the kinds that have some. */
export interface ColumnClass {
  kind: ColumnKind
  nullable: boolean
  /**
   * integer and bigint: the width of the stored integer (`smallint` 16, Postgres `integer` 32,
   * SQLite `INTEGER` and `bigint` 64); float: 32 for a 4-byte Postgres `real`, else 64.
   */
  bits?: 16 | 32 | 64
  /** numeric: total significant digits (`numeric(10, 2)` → 10); absent for a plain `numeric`. */
  precision?: number
  /** numeric: digits after the decimal point (`numeric(10, 2)` → 2; 0 with a precision alone). */
  scale?: number
  /** timestamp and time: the type keeps an offset (`timestamp with time zone`, `timestamptz`). */
  withTimeZone?: boolean
  /** json: stored as text the database's JSON functions read (`json`, `jsonb`, SQLite text), not a blob. */
  textual?: boolean
  /** array: what the array holds, when kiln knows (a Postgres array column). */
  element?: ColumnClass
}

/** What `classifyColumn` reads: a `ColumnInfo`, or anything shaped like one (the data tools' columns). */
export interface ClassifiableColumn {
  sqlType: string
  dataType: string
  nullable?: boolean
  enumValues?: readonly string[] | undefined
  element?: ClassifiableColumn | undefined
}

/**
 * The canonical form of a UUID (any case): what a `uuid` column takes. Any hex digits, as
 * PostgreSQL stores them (`aaaaaaaa-aaaa-…`, `11111111-1111-…` from fixtures or imports), not
 * only RFC 9562's version and variant. The one uuid rule: paths, filters, request bodies, the
 * data tools and the OpenAPI pattern all read it. Spelled without the `i` flag so that the
 * pattern means the same in a JSON Schema.
 */
export const UUID_PATTERN =
  /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/

const TEXT_TYPES = /^(varchar|character varying|char|character|text|citext)\b/
const INT16_TYPES = /^(smallint|int2|smallserial|serial2)\b/
/** 32-bit on Postgres; SQLite's `INTEGER` is 64-bit. */
const INT32_TYPES = /^(integer|int|int4|serial|serial4)\b/
const INT64_TYPES = /^(bigint|int8|bigserial|serial8)\b/
const NUMERIC_TYPES = /^(numeric|decimal)\b/
const NUMERIC_OPTIONS = /^(?:numeric|decimal)\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)/
const FLOAT32_TYPES = /^(real|float4)\b/
const TIMESTAMP_TYPES = /^timestamp/
const TIME_TYPES = /^time(tz)?\b/
const WITH_TIME_ZONE = /with time zone|^timestamptz|^timetz/
const JSON_TYPES = /^jsonb?$/

/**
 * Classifies a column: its kind, nullability, and the width, precision or time zone its kind
 * has. Give the dialect where it is known: SQLite's `INTEGER` is 64-bit and its `REAL` 8 bytes,
 * while the same names are 32-bit on Postgres (the reading without a dialect).
 */
export function classifyColumn(column: ClassifiableColumn, dialect?: Dialect): ColumnClass {
  const sqlType = column.sqlType.trim().toLowerCase()
  const nullable = column.nullable ?? false
  if (column.enumValues && column.enumValues.length > 0) return { kind: 'enum', nullable }
  if (column.dataType === 'array') {
    const element = column.element ? classifyColumn(column.element, dialect) : undefined
    return element ? { kind: 'array', nullable, element } : { kind: 'array', nullable }
  }
  if (NUMERIC_TYPES.test(sqlType) && column.dataType !== 'json') {
    const match = NUMERIC_OPTIONS.exec(sqlType)
    if (!match) return { kind: 'numeric', nullable }
    return { kind: 'numeric', nullable, precision: Number(match[1]), scale: Number(match[2] ?? 0) }
  }
  switch (column.dataType) {
    case 'integer':
    case 'number': {
      const bits = integerBits(sqlType, dialect)
      if (bits !== undefined) return { kind: 'integer', nullable, bits }
      if (column.dataType === 'integer') return { kind: 'integer', nullable, bits: 64 }
      const single = FLOAT32_TYPES.test(sqlType) && dialect !== 'sqlite'
      return { kind: 'float', nullable, bits: single ? 32 : 64 }
    }
    case 'bigint':
      return { kind: 'bigint', nullable, bits: 64 }
    case 'boolean':
      return { kind: 'boolean', nullable }
    case 'date':
      return sqlType === 'date'
        ? { kind: 'date', nullable }
        : { kind: 'timestamp', nullable, withTimeZone: WITH_TIME_ZONE.test(sqlType) }
    case 'string':
      if (TEXT_TYPES.test(sqlType)) return { kind: 'text', nullable }
      if (sqlType === 'uuid') return { kind: 'uuid', nullable }
      if (sqlType === 'date') return { kind: 'date', nullable }
      if (TIMESTAMP_TYPES.test(sqlType) || TIME_TYPES.test(sqlType)) {
        const kind = TIMESTAMP_TYPES.test(sqlType) ? 'timestamp' : 'time'
        return { kind, nullable, withTimeZone: WITH_TIME_ZONE.test(sqlType) }
      }
      return { kind: 'other', nullable }
    case 'json':
      return { kind: 'json', nullable, textual: sqlType === 'text' || JSON_TYPES.test(sqlType) }
    case 'buffer':
      return { kind: 'bytes', nullable }
    default:
      // A custom type declared as json/jsonb holds JSON even where Drizzle cannot say so.
      return JSON_TYPES.test(sqlType)
        ? { kind: 'json', nullable, textual: true }
        : { kind: 'other', nullable }
  }
}

function integerBits(sqlType: string, dialect: Dialect | undefined): 16 | 32 | 64 | undefined {
  const bits = INT16_TYPES.test(sqlType)
    ? 16
    : INT32_TYPES.test(sqlType)
      ? 32
      : INT64_TYPES.test(sqlType)
        ? 64
        : undefined
  // Every integer SQLite stores is 64-bit, whatever the declared name.
  return bits !== undefined && dialect === 'sqlite' ? 64 : bits
}
