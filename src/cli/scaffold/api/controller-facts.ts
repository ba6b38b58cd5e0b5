import { type ColumnInfo, classifyColumn } from '../../../db/models/columns.ts'
import type { ModelInfo } from '../../../db/models/registry.ts'
import type { ModelNames } from './names.ts'
import type { ModelTemplateInput, TemplateContext } from './template-input.ts'
import { idOf } from './templates.ts'

/**
 * The value a timestamp column gets from the controller, read from one clock: the database's
 * `now()` on Postgres (the clock `defaultNow()` reads); on SQLite, which runs in the app's
 * process, the app's clock read once per request (`now`). A `timestamp` without time zone
 * takes UTC, as Drizzle reads it.
 */
export function now(
  column: ColumnInfo,
  dialect: 'postgres' | 'sqlite',
  clock = 'now',
): string | undefined {
  if (column.dataType !== 'date' && column.dataType !== 'string') return undefined
  if (dialect === 'postgres') {
    return classifyColumn(column, dialect).withTimeZone
      ? 'sql`now()`'
      : "sql`now() at time zone 'utc'`"
  }
  return column.dataType === 'date' ? clock : `${clock}.toISOString()`
}

function timestampColumn(model: ModelInfo, name: 'created_at' | 'updated_at') {
  const key = name === 'created_at' ? 'createdAt' : 'updatedAt'
  return model.columns.find((column) => column.name === name || column.key === key)
}

/** What every part of a generated controller is written from: the model and its columns' roles. */
export interface ControllerFacts {
  ctx: TemplateContext
  template: ModelTemplateInput
  model: ModelInfo
  names: ModelNames
  /** The primary key, and how a path or a bulk request gives it. */
  pk: ColumnInfo
  id: ReturnType<typeof idOf>
  /** The table's export and the local name of one row (`posts`, `post`). */
  t: string
  row: string
  /** Soft delete: the `deleted_at` column, and the value a delete sets it to. */
  deletedAt: ColumnInfo | undefined
  trashedAt: string | undefined
  /** The caller's rows only (the list query's `rows`): another record is a 404 to it. */
  where: string
  /** `updated_at`, and the value an update sets it to. */
  updatedAt: ColumnInfo | undefined
  touched: string | undefined
  /** Timestamps a create sets (none when the database fills them all). */
  stamped: ColumnInfo[]
  /** The SQLite clock read once per create, when a create stamps anything. */
  readClock: string
  /** The column a `password` input is hashed into, and the hash's local name. */
  passwordColumn: ColumnInfo | undefined
  optionalPassword: boolean
  hashName: string | undefined
  /** What an update writes: the input, the hash, `updated_at`. */
  setValues: string[]
  /** The parsed body's binding: `input`, or `{ password, ...input }`. */
  input: string
}

export function controllerFacts(
  template: ModelTemplateInput,
  ctx: TemplateContext,
): ControllerFacts {
  const { model, names, passwordColumn } = template
  const pk = model.primaryKey
  if (!pk) throw new TypeError(`${model.name} has no single-column primary key`)
  // Soft delete: a `deleted_at` column hides a record instead of deleting it.
  const deletedAt = model.columns.find((c) => c.name === 'deleted_at' || c.key === 'deletedAt')
  const updatedAt = timestampColumn(model, 'updated_at')
  const touched = updatedAt ? now(updatedAt, ctx.dialect, 'new Date()') : undefined
  // Timestamps the database does not fill are set here, as Laravel's models do; then both are,
  // from one reading of one clock, so updated_at never differs from created_at on create.
  const timestamps = [timestampColumn(model, 'created_at'), updatedAt].filter(
    (column): column is ColumnInfo => column !== undefined && !!now(column, ctx.dialect),
  )
  const stamped = timestamps.some((column) => !column.hasDefault) ? timestamps : []
  // The hash's local name: never `password`, which holds what the request gave.
  const hashName = passwordColumn?.key === 'password' ? 'hashedPassword' : passwordColumn?.key
  const hashEntry = passwordColumn
    ? passwordColumn.key === hashName
      ? hashName
      : `${passwordColumn.key}: ${hashName}`
    : undefined
  return {
    ctx,
    template,
    model,
    names,
    pk,
    id: idOf(pk, ctx.dialect),
    t: names.table,
    row: names.variable,
    deletedAt,
    trashedAt: deletedAt && now(deletedAt, ctx.dialect, 'new Date()'),
    where: 'byId(id, caller)',
    updatedAt,
    touched,
    stamped,
    readClock:
      ctx.dialect === 'sqlite' && stamped.length > 0 ? '\n      const now = new Date()' : '',
    passwordColumn,
    optionalPassword: !!passwordColumn && (passwordColumn.nullable || passwordColumn.hasDefault),
    hashName,
    setValues: [
      '...input',
      ...(hashEntry ? [hashEntry] : []),
      ...(touched ? [`${updatedAt!.key}: ${touched}`] : []),
    ],
    input: passwordColumn ? '{ password, ...input }' : 'input',
  }
}
