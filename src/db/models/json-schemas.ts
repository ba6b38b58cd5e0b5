import type { $Type, Column, ColumnBuilderBase } from 'drizzle-orm'
import type { z } from 'zod'

/**
 * Where the zod schema of a JSON column is kept: on the column's config object, which a Drizzle
 * column builder hands to the column it builds, so the schema attached to `jsonb('settings')` is
 * found again on `table.settings`. A registered symbol, so every copy of kiln loaded in one
 * process (a CLI's and the app's) reads the same one.
 */
const JSON_SCHEMA = Symbol.for('kilnjs.jsonSchema')

/**
 * A `json`/`jsonb` column (or SQLite `text(..., { mode: 'json' })`) whose values must match
 * `schema`: typed as the schema's output like `$type<T>()`, and checked on every write through
 * the REST API (the generated requests' `jsonValue(table.column)`) and the MCP data tools, and
 * described by the schema in the OpenAPI documents.
 *
 * ```ts
 * const Settings = z.strictObject({ color: z.string(), size: z.int().optional() })
 * export const groups = pgTable('groups', { settings: typedJson(jsonb('settings'), Settings) })
 * ```
 */
export function typedJson<B extends ColumnBuilderBase, S extends z.ZodType>(
  builder: B,
  schema: S,
): $Type<B, z.output<S>> {
  const config = configOf(builder)
  if (!config) throw new TypeError('typedJson: pass a Drizzle column builder, e.g. jsonb("data")')
  Object.defineProperty(config, JSON_SCHEMA, { value: schema, configurable: true })
  return (builder as unknown as { $type<T>(): $Type<B, T> }).$type<z.output<S>>()
}

/** The zod schema `typedJson` attached to a column, if any. */
export function jsonSchemaOf(column: Column | undefined): z.ZodType | undefined {
  const config = column ? configOf(column) : undefined
  return config
    ? ((config as Record<symbol, unknown>)[JSON_SCHEMA] as z.ZodType | undefined)
    : undefined
}

function configOf(value: unknown): object | undefined {
  const config = (value as { config?: unknown } | null)?.config
  return typeof config === 'object' && config !== null ? config : undefined
}
