import type { z } from 'zod'
import {
  BODY_FIELD,
  decimal,
  fieldErrors,
  int64,
  mustBe,
  mustBeOneOf,
  uuid,
  validationMessage,
} from '../../api/internal.ts'
import { FieldValueError } from '../../core/errors.ts'
import type { Dialect } from '../../db/database.ts'
import { type ColumnClass, classifyColumn } from '../../db/models/columns.ts'
import type { McpColumn } from './models.ts'

const NUMERIC_STRING = /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/
const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$/

/**
 * Checks a JSON value from a tool call against its column and converts it to what Drizzle
 * binds for that column (a `Date` for timestamps, a `bigint` for bigint-mode columns).
 * Throws `FieldValueError` when the value does not fit, so nothing reaches the database.
 */
export function coerceValue(
  column: McpColumn,
  value: unknown,
  options: { enumValues?: readonly string[] | undefined; dialect?: Dialect | undefined } = {},
): unknown {
  const { enumValues = column.enumValues, dialect } = options
  if (value === null) {
    if (!column.nullable) throw new FieldValueError('must not be null')
    return null
  }
  // The dialect decides an integer's width: SQLite's are all 64-bit.
  const kind = classifyColumn(column, dialect)
  // numeric(p, s) in any mode, and 64-bit integers: the very rules of the REST requests.
  if (kind.kind === 'numeric') return coerceDecimal(column, kind, value)
  switch (column.dataType) {
    case 'string':
      return coerceString(column, kind, value, enumValues)
    case 'integer':
    case 'number':
      return coerceNumber(value, kind)
    case 'bigint':
      return parseWith(int64(), value)
    case 'boolean':
      if (typeof value !== 'boolean') throw new FieldValueError(mustBe('boolean'))
      return value
    case 'date':
      return coerceDate(value)
    case 'json':
      return column.jsonSchema ? parseJson(column.jsonSchema, value) : value
    case 'array':
      if (!Array.isArray(value)) throw new FieldValueError(mustBe('array'))
      return value
    case 'buffer':
      throw new FieldValueError('binary columns cannot be set through the data tools')
    default:
      if (typeof value === 'object') throw new FieldValueError('expected a scalar value')
      return value
  }
}

function coerceString(
  column: McpColumn,
  kind: ColumnClass,
  value: unknown,
  enumValues?: readonly string[],
): string {
  if (typeof value !== 'string') throw new FieldValueError(mustBe('string'))
  if (column.length !== undefined && [...value].length > column.length) {
    throw new FieldValueError(`must be at most ${column.length} characters`)
  }
  if (enumValues && enumValues.length > 0 && !enumValues.includes(value)) {
    throw new FieldValueError(mustBeOneOf(enumValues))
  }
  if (kind.kind === 'uuid') parseWith(UUID, value)
  if (value.includes('\u0000')) throw new FieldValueError('must not contain NUL characters')
  return value
}

function coerceNumber(value: unknown, kind: ColumnClass): number {
  let number: number
  if (typeof value === 'number') number = value
  else if (typeof value === 'string' && NUMERIC_STRING.test(value.trim())) number = Number(value)
  else throw new FieldValueError(mustBe('number'))
  if (!Number.isFinite(number)) throw new FieldValueError('must be a finite number')
  if (kind.kind === 'integer') {
    if (!Number.isSafeInteger(number)) throw new FieldValueError(mustBe('int'))
    const range = kind.bits === 16 || kind.bits === 32 ? 2 ** (kind.bits - 1) : undefined
    if (range !== undefined && (number < -range || number >= range)) {
      throw new FieldValueError(`must be between ${-range} and ${range - 1}`)
    }
  }
  return number
}

const UUID = uuid()

const decimals = new Map<string, ReturnType<typeof decimal>>()

/** A `numeric(p, s)` value: never rounded, too many digits refused (as `decimal()` does on REST). */
function coerceDecimal(column: McpColumn, kind: ColumnClass, value: unknown): unknown {
  const key = `${kind.precision},${kind.scale}`
  let schema = decimals.get(key)
  if (!schema) {
    const { precision, scale } = kind
    schema = decimal(
      precision === undefined ? {} : { precision, ...(scale === undefined ? {} : { scale }) },
    )
    decimals.set(key, schema)
  }
  const text = parseWith(schema, value)
  if (column.dataType === 'number') return Number(text)
  if (column.dataType === 'bigint') {
    if (!/^-?\d+$/.test(text)) throw new FieldValueError('must be a whole number')
    return BigInt(text)
  }
  return text
}

/** Parses with a REST column schema; its first message (worded by `validationMessage`) if refused. */
function parseWith<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value, { error: validationMessage })
  if (result.success) return result.data
  throw new FieldValueError(result.error.issues[0]?.message ?? 'is not valid')
}

/**
 * A value of a `typedJson` column, checked with its schema as the REST requests check it;
 * the message names the path inside the value (`color: must be a string`).
 */
function parseJson(schema: z.ZodType, value: unknown): unknown {
  const result = schema.safeParse(value, { error: validationMessage })
  if (result.success) return result.data
  // The REST 422's grouping (`fieldErrors`): dotted paths, unknown keys one by one.
  const problems = Object.entries(fieldErrors(result.error.issues)).map(([path, messages]) =>
    path === BODY_FIELD ? messages.join(', ') : `${path}: ${messages.join(', ')}`,
  )
  throw new FieldValueError(problems.join(', '))
}

function coerceDate(value: unknown): Date {
  if (typeof value !== 'string' || !ISO_DATE.test(value)) {
    throw new FieldValueError(mustBe('datetime'))
  }
  const date = new Date(value)
  if (Number.isNaN(date.getTime())) throw new FieldValueError(mustBe('datetime'))
  return date
}
