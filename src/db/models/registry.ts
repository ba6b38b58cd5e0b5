import { type Column, getTableColumns, is, Table } from 'drizzle-orm'
import { getTableConfig as getPgTableConfig, PgTable } from 'drizzle-orm/pg-core'
import { getTableConfig as getSqliteTableConfig, SQLiteTable } from 'drizzle-orm/sqlite-core'
import type { Dialect } from '../database.ts'
import { type ColumnInfo, describeColumn } from './columns.ts'
import { modelName, resourceName } from './inflect.ts'

interface ModelInfoBase {
  /** PascalCase singular of the table name: `blog_posts` → `BlogPost`. */
  name: string
  /** Plural lowercase snake_case: `blog_posts`, the `{resource}` of `/api/v1/{resource}`. */
  resource: string
  tableName: string
  /** The name the schema module exports the table under. */
  exportName: string
  /** Every column, in the table's order. */
  columns: ColumnInfo[]
  /** The single-column primary key; undefined when the table has none or a composite one. */
  primaryKey: ColumnInfo | undefined
  /** Columns a create/update request may set: no auto-increment or generated keys, no timestamps. */
  writableFields: ColumnInfo[]
}

/** A model backed by a PostgreSQL table. */
export interface PostgresModelInfo extends ModelInfoBase {
  dialect: 'postgres'
  table: PgTable
}

/** A model backed by a SQLite table. */
export interface SqliteModelInfo extends ModelInfoBase {
  dialect: 'sqlite'
  table: SQLiteTable
}

/** One model of the registry: a Drizzle table of the app's dialect, read as a model. */
export type ModelInfo = PostgresModelInfo | SqliteModelInfo

/** The app's models, read from its schema module by `createModelRegistry`. */
export interface ModelRegistry {
  readonly dialect: Dialect
  /** The models, sorted by name. */
  readonly models: ModelInfo[]
  /** A model by name (`BlogPost`), resource (`blog_posts`) or table name; case-insensitive. */
  get(nameOrResource: string): ModelInfo | undefined
  /** The model names, in order. */
  names(): string[]
}

/**
 * Columns the app writes, never a request: the timestamps, and `deleted_at`, which only a
 * delete (soft) and a restore change.
 */
const TIMESTAMP_COLUMNS = new Set([
  'created_at',
  'updated_at',
  'deleted_at',
  'createdAt',
  'updatedAt',
  'deletedAt',
])

function dialectOf(table: Table): Dialect | 'other' {
  if (is(table, PgTable)) return 'postgres'
  if (is(table, SQLiteTable)) return 'sqlite'
  return 'other'
}

function describeTable(exportName: string, table: PgTable | SQLiteTable, dialect: Dialect) {
  const config = is(table, PgTable) ? getPgTableConfig(table) : getSqliteTableConfig(table)
  // getTableConfig builds the columns of constraints separately: compare them by name.
  const compositeKeyColumns = new Set<string>(
    config.primaryKeys.flatMap((pk): Column[] => pk.columns).map((column) => column.name),
  )
  const entries = Object.entries(getTableColumns(table))
  const primaryCount = entries.filter(
    ([, column]) => column.primary || compositeKeyColumns.has(column.name),
  ).length
  const generated = new Set<string>()
  const columns = entries.map(([key, column]) => {
    if (column.generated) generated.add(key)
    return describeColumn(key, column, dialect, {
      inPrimaryKey: compositeKeyColumns.has(column.name),
      singlePrimaryKey: primaryCount === 1,
    })
  })
  const primaryKeys = columns.filter((column) => column.primaryKey)
  return {
    name: modelName(config.name),
    resource: resourceName(config.name),
    tableName: config.name,
    exportName,
    columns,
    primaryKey: primaryKeys.length === 1 ? primaryKeys[0] : undefined,
    writableFields: columns.filter(
      (column) =>
        !(column.primaryKey && column.autoIncrement) &&
        !generated.has(column.key) &&
        !TIMESTAMP_COLUMNS.has(column.name) &&
        !TIMESTAMP_COLUMNS.has(column.key),
    ),
  }
}

const DIALECT_LABEL = { postgres: 'Postgres (pg-core)', sqlite: 'SQLite (sqlite-core)' }

/**
 * A schema module `createModelRegistry` cannot read: a TypeError naming the function, whose
 * `reason` (the message without that prefix) is what the kiln command prints.
 */
export class ModelRegistryError extends TypeError {
  readonly reason: string
  constructor(reason: string) {
    super(`createModelRegistry: ${reason}`)
    this.name = 'ModelRegistryError'
    this.reason = reason
  }
}

/**
 * Reads the Drizzle tables a schema module exports (relations, views and other exports are
 * ignored) and describes each as a model. Every table must belong to `dialect`; a table of
 * another dialect, or two tables that would get the same model name, is a TypeError.
 * @example
 * ```ts
 * import * as schema from './schema.ts'
 * const models = createModelRegistry(schema, 'postgres')
 * ```
 */
export function createModelRegistry(
  schemaModule: Record<string, unknown>,
  dialect: Dialect,
): ModelRegistry {
  if (dialect !== 'postgres' && dialect !== 'sqlite') {
    throw new ModelRegistryError(`dialect must be 'postgres' or 'sqlite'`)
  }
  const models: ModelInfo[] = []
  const seen = new Set<unknown>()
  for (const [exportName, value] of Object.entries(schemaModule)) {
    if (!is(value, Table) || seen.has(value)) continue
    seen.add(value)
    const tableDialect = dialectOf(value)
    if (tableDialect !== dialect) {
      const found =
        tableDialect === 'other'
          ? 'a table of another dialect'
          : `a ${DIALECT_LABEL[tableDialect]} table`
      throw new ModelRegistryError(
        `export "${exportName}" is ${found}, but the app's dialect is ${DIALECT_LABEL[dialect]}`,
      )
    }
    const info = describeTable(exportName, value as PgTable | SQLiteTable, dialect)
    const clash = models.find((model) => model.name === info.name)
    if (clash) {
      throw new ModelRegistryError(
        `tables "${clash.tableName}" and "${info.tableName}" both map to the model name ${info.name}`,
      )
    }
    models.push({ ...info, dialect, table: value } as ModelInfo)
  }
  models.sort((a, b) => (a.name < b.name ? -1 : 1))
  const byKey = new Map<string, ModelInfo>()
  for (const model of models) {
    for (const key of [model.name, model.resource, model.tableName]) {
      const lower = key.toLowerCase()
      if (!byKey.has(lower)) byKey.set(lower, model)
    }
  }
  return {
    dialect,
    models,
    get: (nameOrResource) => byKey.get(nameOrResource.toLowerCase()),
    names: () => models.map((model) => model.name),
  }
}
