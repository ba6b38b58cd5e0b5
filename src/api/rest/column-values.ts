import type { Column } from 'drizzle-orm'
import { z } from 'zod'
import { UUID_PATTERN } from '../../db/models/columns.ts'
import { jsonSchemaOf } from '../../db/models/json-schemas.ts'

/** Options of `decimal`. */
export interface DecimalOptions {
  /** Total significant digits (`numeric(10, 2)` → 10); none for a plain `numeric`. */
  precision?: number
  /** Digits after the decimal point (`numeric(10, 2)` → 2); 0 when only a precision is set. */
  scale?: number
}

const DECIMAL = /^-?(\d+)(?:\.(\d+))?$/

/**
 * A `numeric(p, s)` request field: a JSON number or a numeric string (`12.5`, `"12.50"`),
 * refused with a 422 when it has more digits than the column keeps, never rounded. The parsed
 * value is the decimal string the column stores, so no precision is lost on the way.
 *
 * The one rule for numeric values: the generated requests use it, and so do the MCP data tools
 * (`classifyColumn` reads the precision and scale from the column's SQL type).
 */
export function decimal({ precision, scale = 0 }: DecimalOptions = {}) {
  const whole = precision === undefined ? undefined : precision - scale
  const limits =
    precision === undefined
      ? 'a decimal number'
      : scale === 0
        ? `a whole number of at most ${whole} digits`
        : `a number with at most ${whole} digits before the decimal point and ${scale} after it`
  // The type check is zod's own (absent, null and other types get the usual messages); the
  // digits are checked on the text, so a string is never read through a float.
  return z.union([z.string(), z.number()]).transform((value, ctx) => {
    const text = typeof value === 'number' ? numberText(value) : value
    const match = text === undefined ? null : DECIMAL.exec(text)
    if (match === null && typeof value === 'string') {
      ctx.addIssue({ code: 'custom', message: PLAIN_DIGITS, input: value })
      return z.NEVER
    }
    const digits = match?.[1]?.replace(/^0+(?=\d)/, '') ?? ''
    const fraction = match?.[2]?.replace(/0+$/, '') ?? ''
    const fits =
      match !== null &&
      (whole === undefined || (digits === '0' ? 0 : digits.length) <= whole) &&
      (precision === undefined || fraction.length <= scale)
    if (!fits) {
      ctx.addIssue({ code: 'custom', message: `must be ${limits}`, input: value })
      return z.NEVER
    }
    return text as string
  })
}

const PLAIN_DIGITS = 'must be a decimal number written in digits, like "12.50"'

/** A finite JSON number as plain decimal text (`1e-7` → undefined: too many digits anyway). */
function numberText(value: number): string | undefined {
  if (!Number.isFinite(value)) return undefined
  const text = String(value)
  return /e/i.test(text) ? undefined : text
}

/**
 * A `uuid` field: any 8-4-4-4-12 hex string, as a `uuid` column takes it (zod's `z.uuid()`
 * also demands RFC 9562 version and variant digits, refusing ids the database holds). Its JSON
 * Schema is `format: uuid` with that pattern, so the OpenAPI documents accept every id the API
 * returns. The generated requests and resources use it, and so do the data tools.
 */
export function uuid() {
  return z.stringFormat('uuid', UUID_PATTERN)
}

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

/**
 * A `bigint` request field: a JSON integer or a string of digits (JSON numbers lose precision
 * beyond 2^53, so large values travel as strings), within the 64-bit range; parsed to `bigint`.
 */
export function int64() {
  const message = 'must be a whole number between -9223372036854775808 and 9223372036854775807'
  return z
    .union([z.int(), z.string().regex(/^-?\d{1,19}$/)], { error: message })
    .transform((value, ctx) => {
      const big = BigInt(value)
      if (big < INT64_MIN || big > INT64_MAX) {
        ctx.addIssue({ code: 'custom', message, input: value })
        return z.NEVER
      }
      return big
    })
}

/**
 * A `json`/`jsonb` request field typed as the column's `$type<T>()`. Given the column, it is the
 * zod schema `typedJson` (kilnjs/db) attached to it, so a write must match it (a 422 names the
 * path inside the value: `settings.color`), `.nullable()` when the column is; otherwise, or
 * without a column, any JSON value passes. A missing required field is still reported, and so
 * is `null` on a NOT NULL column ("must not be null", before the database refuses it).
 */
export function jsonValue<T>(column?: Column): z.ZodType<T> {
  const schema = jsonSchemaOf(column)
  if (schema) return (column?.notNull ? schema : schema.nullable()) as z.ZodType<T>
  // The messages are the catalogue's (`validationMessage`): absent, or null on a NOT NULL column.
  const notNull = column?.notNull === true
  return z.unknown().check((ctx) => {
    if (ctx.value === undefined || (notNull && ctx.value === null)) {
      ctx.issues.push({ code: 'invalid_type', expected: 'unknown', input: ctx.value })
    }
  }) as z.ZodType<T>
}
