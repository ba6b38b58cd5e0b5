import {
  and,
  asc,
  type Column,
  count,
  DrizzleQueryError,
  eq,
  getTableColumns,
  isNull,
  type SQL,
  sql,
} from 'drizzle-orm'
import type { PgDatabase, PgQueryResultHKT, PgTable, PgUpdateSetSource } from 'drizzle-orm/pg-core'
import type { SQLiteTable, SQLiteUpdateSetSource } from 'drizzle-orm/sqlite-core'
import type { Logger } from '../core/index.ts'
import type { Database, PostgresDatabase, SqliteDatabase } from '../db/index.ts'
import {
  columnNamed,
  creatableColumns,
  findModel,
  isSensitiveField,
  type McpColumn,
  type McpModel,
  type McpModelSource,
  primaryKeyOf,
  TENANT_FIELD,
  TIMESTAMP_FIELDS,
  updatableColumns,
  visibleColumns,
} from './models.ts'
import { coerceValue, FieldValueError, toJsonValue } from './values.ts'

/** A failure the caller can fix; its message is returned as the tool error. */
export class ToolError extends Error {}

/** Who calls the tools: the access token's subject and tenant, or nobody (a local stdio server). */
export interface McpCaller {
  userId?: string | undefined
  tenantId?: string | undefined
}

export interface CrudOptions {
  database: Database
  models: McpModelSource
  caller?: McpCaller | undefined
  logger?: Logger | undefined
}

export const MAX_PER_PAGE = 100
export const DEFAULT_PER_PAGE = 15

export type JsonRecord = Record<string, unknown>

export interface ListInput {
  model: string
  filters?: Record<string, unknown> | undefined
  page?: number | undefined
  per_page?: number | undefined
}

export interface ListResult {
  records: JsonRecord[]
  total: number
  page: number
  per_page: number
}

export interface Crud {
  create(input: { model: string; data: Record<string, unknown> }): Promise<JsonRecord>
  list(input: ListInput): Promise<ListResult>
  update(input: {
    model: string
    id: string | number
    data: Record<string, unknown>
  }): Promise<JsonRecord>
  delete(input: { model: string; id: string | number }): Promise<{ message: string; id: unknown }>
}

/**
 * The four data operations behind `crud_create`, `crud_list`, `crud_update` and `crud_delete`.
 * Field names are checked against the model, values against their columns, and everything is
 * bound as a parameter through Drizzle's query builder. With a caller tenant and a model that
 * has `tenant_id`, every statement is limited to that tenant's rows.
 */
export function createCrud(options: CrudOptions): Crud {
  const { database, models, caller, logger } = options
  const run = <T>(action: string, work: () => Promise<T>) => guardDatabase(action, work, logger)

  return {
    async create({ model: name, data }) {
      const model = resolveModel(models, name)
      const values = parseData(model, data, creatableColumns(model), 'create')
      const tenant = tenantOf(model, caller)
      if (tenant) values.set(tenant.column, checkTenantValue(tenant, values.get(tenant.column)))
      for (const column of model.columns) {
        if (TIMESTAMP_FIELDS.includes(column.name) && !values.has(column) && !column.hasDefault) {
          const now = nowFor(column)
          if (now !== undefined) values.set(column, now)
        }
      }
      const missing = model.columns.filter(
        (column) =>
          !column.nullable &&
          !column.hasDefault &&
          !column.autoIncrement &&
          !TIMESTAMP_FIELDS.includes(column.name) &&
          !values.has(column),
      )
      if (missing.length > 0) {
        throw new ToolError(
          `Missing required field(s) for ${model.resource}: ${missing.map((c) => c.name).join(', ')}`,
        )
      }
      const row = toRowObject(values)
      const created = await run(`create ${model.resource}`, () =>
        database.dialect === 'postgres'
          ? insertPostgres(database, model, row)
          : insertSqlite(database, model, row),
      )
      if (!created) throw new ToolError(`The ${model.resource} record was not created`)
      return serialize(model, created)
    },

    async list({ model: name, filters = {}, page = 1, per_page = DEFAULT_PER_PAGE }) {
      const model = resolveModel(models, name)
      if (!Number.isSafeInteger(page) || page < 1)
        throw new ToolError('page must be an integer of at least 1')
      if (!Number.isSafeInteger(per_page) || per_page < 1) {
        throw new ToolError('per_page must be an integer of at least 1')
      }
      const perPage = Math.min(per_page, MAX_PER_PAGE)
      const offset = (page - 1) * perPage
      if (!Number.isSafeInteger(offset)) throw new ToolError('page is too large')
      const conditions = parseFilters(model, filters)
      const tenant = tenantOf(model, caller)
      if (tenant) conditions.push(eq(drizzleColumn(model, tenant.column), tenant.value))
      const where = conditions.length > 0 ? and(...conditions) : undefined
      const order = orderColumn(model)
      const { rows, total } = await run(`list ${model.resource}`, async () => {
        if (database.dialect === 'postgres') {
          const db = pgDb(database)
          const table = model.table as PgTable
          // Two statements on the pool at once: the page and its total.
          const [rows, [counted]] = await Promise.all([
            db.select().from(table).where(where).orderBy(asc(order)).limit(perPage).offset(offset),
            db.select({ total: count() }).from(table).where(where),
          ])
          return { rows, total: counted?.total ?? 0 }
        }
        const table = model.table as SQLiteTable
        const rows = await database.db
          .select()
          .from(table)
          .where(where)
          .orderBy(asc(order))
          .limit(perPage)
          .offset(offset)
        const [counted] = await database.db.select({ total: count() }).from(table).where(where)
        return { rows, total: counted?.total ?? 0 }
      })
      return {
        records: rows.map((row) => serialize(model, row as JsonRecord)),
        total: Number(total),
        page,
        per_page: perPage,
      }
    },

    async update({ model: name, id, data }) {
      const model = resolveModel(models, name)
      const key = requirePrimaryKey(model)
      if (Object.keys(data).length === 0)
        throw new ToolError('data must name at least one field to change')
      if (key.name in data)
        throw new ToolError(`${key.name} is the primary key and cannot be changed`)
      const values = parseData(model, data, updatableColumns(model), 'update')
      const tenant = tenantOf(model, caller)
      if (tenant && values.has(tenant.column)) checkTenantValue(tenant, values.get(tenant.column))
      const updatedAt = model.columns.find((column) => column.name === 'updated_at')
      if (updatedAt && !values.has(updatedAt)) {
        const now = nowFor(updatedAt)
        if (now !== undefined) values.set(updatedAt, now)
      }
      const where = rowCondition(model, key, id, tenant)
      const row = toRowObject(values)
      const updated = await run(`update ${model.resource}`, async () => {
        if (database.dialect === 'postgres') {
          const [first] = await pgDb(database)
            .update(model.table as PgTable)
            .set(row as PgUpdateSetSource<PgTable>)
            .where(where)
            .returning()
          return first
        }
        const table = model.table as SQLiteTable
        const result = database.db
          .update(table)
          .set(row as SQLiteUpdateSetSource<SQLiteTable>)
          .where(where)
          .run()
        if (result.changes === 0) return undefined
        const [first] = await database.db.select().from(table).where(where).limit(1)
        return first
      })
      if (!updated) throw notFound(model, id)
      return serialize(model, updated as JsonRecord)
    },

    async delete({ model: name, id }) {
      const model = resolveModel(models, name)
      const key = requirePrimaryKey(model)
      const where = rowCondition(model, key, id, tenantOf(model, caller))
      const deleted = await run(`delete ${model.resource}`, async () => {
        if (database.dialect === 'postgres') {
          const rows = await pgDb(database)
            .delete(model.table as PgTable)
            .where(where)
            .returning()
          return rows.length
        }
        return database.db
          .delete(model.table as SQLiteTable)
          .where(where)
          .run().changes
      })
      if (deleted === 0) throw notFound(model, id)
      return { message: 'Deleted', id }
    },
  }
}

function resolveModel(source: McpModelSource, name: string): McpModel {
  const model = findModel(source, name)
  if (model) return model
  const valid = source.models.map((m) => m.resource).join(', ') || '(none)'
  throw new ToolError(`Unknown model "${name}". Valid models: ${valid}`)
}

function requirePrimaryKey(model: McpModel): McpColumn {
  const key = primaryKeyOf(model)
  if (!key) throw new ToolError(`${model.resource} has no single-column primary key`)
  return key
}

/** Checks the field names and values of `data` against the model; collects every problem. */
function parseData(
  model: McpModel,
  data: Record<string, unknown>,
  allowed: McpColumn[],
  action: 'create' | 'update',
): Map<McpColumn, unknown> {
  const values = new Map<McpColumn, unknown>()
  const unknown: string[] = []
  const problems: string[] = []
  for (const [name, value] of Object.entries(data)) {
    const column = allowed.find((candidate) => candidate.name === name)
    if (!column) {
      unknown.push(name)
      continue
    }
    try {
      values.set(column, coerceValue(column, value, enumValuesOf(model, column)))
    } catch (error) {
      if (!(error instanceof FieldValueError)) throw error
      problems.push(`${name}: ${error.message}`)
    }
  }
  if (unknown.length > 0) {
    throw new ToolError(
      `Unknown field(s) for ${action} on ${model.resource}: ${unknown.map(quote).join(', ')}. ` +
        `Valid fields: ${allowed.map((column) => column.name).join(', ')}`,
    )
  }
  if (problems.length > 0)
    throw new ToolError(`Invalid data for ${model.resource}: ${problems.join('; ')}`)
  return values
}

/** Equality conditions from `filters`; sensitive fields cannot be filtered on. */
function parseFilters(model: McpModel, filters: Record<string, unknown>): SQL[] {
  const allowed = visibleColumns(model)
  const conditions: SQL[] = []
  const unknown: string[] = []
  const problems: string[] = []
  for (const [name, value] of Object.entries(filters)) {
    const column = allowed.find((candidate) => candidate.name === name)
    if (!column) {
      unknown.push(name)
      continue
    }
    if (value === null) {
      conditions.push(isNull(drizzleColumn(model, column)))
      continue
    }
    try {
      const coerced = coerceValue(column, value, enumValuesOf(model, column))
      conditions.push(eq(drizzleColumn(model, column), coerced))
    } catch (error) {
      if (!(error instanceof FieldValueError)) throw error
      problems.push(`${name}: ${error.message}`)
    }
  }
  if (unknown.length > 0) {
    throw new ToolError(
      `Unknown filter field(s) for ${model.resource}: ${unknown.map(quote).join(', ')}. ` +
        `Valid fields: ${allowed.map((column) => column.name).join(', ')}`,
    )
  }
  if (problems.length > 0)
    throw new ToolError(`Invalid filters for ${model.resource}: ${problems.join('; ')}`)
  return conditions
}

interface TenantScope {
  column: McpColumn
  value: unknown
}

/** The caller's tenant as a value of the model's `tenant_id` column, when both exist. */
function tenantOf(model: McpModel, caller: McpCaller | undefined): TenantScope | undefined {
  if (caller?.tenantId === undefined) return undefined
  const column = columnNamed(model, TENANT_FIELD)
  if (!column) return undefined
  try {
    return { column, value: coerceValue(column, caller.tenantId) }
  } catch {
    throw new ToolError(`Your tenant cannot be matched to ${model.resource}.${TENANT_FIELD}`)
  }
}

function checkTenantValue(tenant: TenantScope, given: unknown): unknown {
  if (given !== undefined && String(given) !== String(tenant.value)) {
    throw new ToolError(
      `${TENANT_FIELD} must be your own tenant; another tenant's id cannot be set`,
    )
  }
  return tenant.value
}

function rowCondition(
  model: McpModel,
  key: McpColumn,
  id: string | number,
  tenant: TenantScope | undefined,
): SQL {
  let value: unknown
  try {
    value = coerceValue({ ...key, nullable: false }, id)
  } catch (error) {
    if (!(error instanceof FieldValueError)) throw error
    throw new ToolError(`id: ${error.message}`)
  }
  const condition = eq(drizzleColumn(model, key), value)
  return tenant ? and(condition, eq(drizzleColumn(model, tenant.column), tenant.value))! : condition
}

function notFound(model: McpModel, id: string | number): ToolError {
  return new ToolError(`No ${model.resource} record with id ${JSON.stringify(id)}`)
}

function drizzleColumn(model: McpModel, column: McpColumn): Column {
  const found = getTableColumns(model.table)[column.key]
  if (!found) throw new TypeError(`Model ${model.name} has no column property ${column.key}`)
  return found
}

function enumValuesOf(model: McpModel, column: McpColumn): readonly string[] | undefined {
  return column.enumValues ?? drizzleColumn(model, column).enumValues
}

function orderColumn(model: McpModel): Column {
  const key = primaryKeyOf(model) ?? model.columns[0]
  if (!key) throw new TypeError(`Model ${model.name} has no columns`)
  return drizzleColumn(model, key)
}

function nowFor(column: McpColumn): unknown {
  if (column.dataType === 'date') return new Date()
  if (column.dataType === 'string') return new Date().toISOString()
  return undefined
}

function toRowObject(values: Map<McpColumn, unknown>): Record<string, unknown> {
  const row: Record<string, unknown> = {}
  for (const [column, value] of values) row[column.key] = value
  return row
}

/** A database row as the tools return it: column names as keys, sensitive fields left out. */
function serialize(model: McpModel, row: JsonRecord): JsonRecord {
  const out: JsonRecord = {}
  for (const column of model.columns) {
    if (isSensitiveField(column.name)) continue
    out[column.name] = toJsonValue(row[column.key])
  }
  return out
}

function pgDb(database: PostgresDatabase): PgDatabase<PgQueryResultHKT> {
  return database.db as unknown as PgDatabase<PgQueryResultHKT>
}

async function insertPostgres(
  database: PostgresDatabase,
  model: McpModel,
  row: Record<string, unknown>,
): Promise<JsonRecord | undefined> {
  const [created] = await pgDb(database)
    .insert(model.table as PgTable)
    .values(row)
    .returning()
  return created
}

/** SQLite: insert, then read the row back by its last inserted row id. */
async function insertSqlite(
  database: SqliteDatabase,
  model: McpModel,
  row: Record<string, unknown>,
): Promise<JsonRecord | undefined> {
  const table = model.table as SQLiteTable
  const result = database.db.insert(table).values(row).run()
  const [created] = await database.db
    .select()
    .from(table)
    .where(sql`rowid = ${result.lastInsertRowid}`)
    .limit(1)
  return created
}

const CONSTRAINT_MESSAGES: Array<[RegExp, string]> = [
  [
    /^(23505|SQLITE_CONSTRAINT_(UNIQUE|PRIMARYKEY))$/,
    'a record with the same unique value already exists',
  ],
  [
    /^(23503|SQLITE_CONSTRAINT_FOREIGNKEY)$/,
    'a referenced record does not exist, or other records still reference this one',
  ],
  [/^(23502|SQLITE_CONSTRAINT_NOTNULL)$/, 'a required field is missing'],
  [/^(23514|SQLITE_CONSTRAINT_CHECK)$/, 'a check constraint failed'],
  [/^(22\w{3}|SQLITE_MISMATCH|SQLITE_TOOBIG)$/, 'a value does not fit its column'],
  [/^(23\w{3}|SQLITE_CONSTRAINT\w*)$/, 'a constraint failed'],
]

/**
 * Runs a statement; a constraint or data error becomes a tool error that names the kind of
 * problem (never the statement or its parameters), anything else is logged and reported as a
 * database failure.
 */
async function guardDatabase<T>(
  action: string,
  work: () => Promise<T>,
  logger: Logger | undefined,
): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof ToolError) throw error
    const cause = error instanceof DrizzleQueryError ? error.cause : error
    const code = (cause as { code?: unknown } | undefined)?.code
    if (typeof code === 'string') {
      for (const [pattern, message] of CONSTRAINT_MESSAGES) {
        if (pattern.test(code)) throw new ToolError(`Could not ${action}: ${message}`)
      }
    }
    logger?.error(
      { code, error: cause instanceof Error ? cause.message : String(cause) },
      `mcp: ${action} failed`,
    )
    throw new ToolError(`Could not ${action}: the database failed (the error was logged)`)
  }
}

function quote(name: string): string {
  return JSON.stringify(name)
}
