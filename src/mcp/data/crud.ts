import { and, type Column, getTableName, type SQL, sql } from 'drizzle-orm'
import type { PgDatabase, PgQueryResultHKT, PgTable, PgUpdateSetSource } from 'drizzle-orm/pg-core'
import type { SQLiteTable, SQLiteUpdateSetSource } from 'drizzle-orm/sqlite-core'
import { createRecordCounter, type Realtime, type RecordCounter } from '../../api/index.ts'
import { notTrashed, softDeleteColumn } from '../../api/internal.ts'
import type { Logger } from '../../core/index.ts'
import type { Database, PostgresDatabase, SqliteDatabase } from '../../db/index.ts'
import type { AuditTrail } from '../audit/audit-trail.ts'
import { auditedCrud } from '../audit/audited-crud.ts'
import { ToolError } from '../tool-error.ts'
import {
  type AccessPolicy,
  authorizeCall,
  checkCall,
  type McpAccessOptions,
  type McpCaller,
  type McpQueries,
  resolveAccess,
  rowsOf,
} from './access.ts'
import { aggregateRecords } from './crud-aggregate.ts'
import type { Crud } from './crud-contract.ts'
import {
  checkTenantValue,
  DEFAULT_PER_PAGE,
  type JsonRecord,
  MAX_PER_PAGE,
  notFound,
  parseData,
  readClock,
  requirePrimaryKey,
  resolveModel,
  rowCondition,
  serialize,
  tenantOf,
  toRowObject,
} from './crud-input.ts'
import { type ListInput, type ListResult, listRecords } from './crud-list.ts'
import { guardDatabase } from './database-errors.ts'
import { type McpColumn, type McpModel, type McpModelSource, TIMESTAMP_FIELDS } from './models.ts'
import { checkRequest, type McpRequests } from './request-schemas.ts'

export type { Crud } from './crud-contract.ts'
export type { FilterValue } from './crud-list.ts'
export type { JsonRecord, ListInput, ListResult, McpCaller }
export { DEFAULT_PER_PAGE, MAX_PER_PAGE, ToolError }

/** Options of `createCrud`. */
export interface CrudOptions {
  database: Database
  models: McpModelSource
  caller?: McpCaller | undefined
  /**
   * What the tools may do on which model, for whom. Default: every model readable through
   * `crud_list`, nothing writable. A resolved policy (`resolveAccess`) is reused as is.
   */
  access?: McpAccessOptions | AccessPolicy | undefined
  /**
   * The app's REST list queries by model (`{ posts: postsQuery }`): a model that has one is
   * read under its rules (fields, filter, sort, search, include, row filter), the same as
   * through REST; `access` then says only which tools, and `authorize`.
   */
  queries?: McpQueries | undefined
  /**
   * The app's REST request schemas by model (`{ posts: { create: CreatePostRequest, update:
   * UpdatePostRequest } }`): a model that has them is written with their fields and checks,
   * the same as through REST; `access` then names no `write` for it.
   */
  requests?: McpRequests | undefined
  /**
   * The counter behind `crud_list`'s `total`: give it the REST group's (`counts`, or a
   * `createRecordCounter` on the same store, Redis for several instances), so writes through
   * the API and through the tools invalidate one cached count. Default: a counter of these
   * tools alone (in memory, trusted 5 s).
   */
  counts?: RecordCounter | undefined
  logger?: Logger | undefined
  /**
   * Records every call (who, which client, tool, model, record ids, fields written, outcome,
   * duration) in the `kiln_mcp_audit` table: `createAuditTrail({ database })`.
   */
  audit?: AuditTrail | undefined
  /**
   * The realtime core (`createRealtime`): each write the tools commit is published to its change
   * feed, as the REST operations' are, so streams and subscriptions hear them.
   */
  realtime?: Pick<Realtime, 'publish'> | undefined
}

/** The access policy of the options, resolved once per options object. */
export function accessPolicyOf(
  options: Pick<CrudOptions, 'models' | 'access' | 'queries' | 'requests'>,
): AccessPolicy {
  const access = options.access
  if (access && 'of' in access && typeof access.of === 'function') return access as AccessPolicy
  return resolveAccess(
    options.models,
    access as McpAccessOptions | undefined,
    options.queries,
    options.requests,
  )
}

/**
 * The data operations behind `crud_create`, `crud_list` (and `crud_aggregate`), `crud_update`
 * and `crud_delete`.
 * Field names are checked against the model, values against their columns, and everything is
 * bound as a parameter through Drizzle's query builder. With a caller tenant and a model that
 * has `tenant_id`, every statement is limited to that tenant's rows.
 * @example
 * ```ts
 * const crud = createCrud({ database, models, access })
 * ```
 */
export function createCrud(options: CrudOptions): Crud {
  if (options.audit) {
    const { audit, ...rest } = options
    return auditedCrud(createCrud(rest), { trail: audit, caller: rest.caller, models: rest.models })
  }
  const { database, models, caller, logger, counts = createRecordCounter() } = options
  // After the commit, the record's id: each subscriber reads the record under its own policy.
  const changed = async (model: McpModel, kind: 'created' | 'updated' | 'deleted', id: unknown) => {
    if (id === undefined || id === null) return
    await options.realtime?.publish([
      { resource: model.resource, table: model.tableName, kind, id },
    ])
  }
  const policy = accessPolicyOf(options)
  const run = <T>(action: string, work: () => Promise<T>) => guardDatabase(action, work, logger)
  const find = (name: string) => resolveModel(models, name, policy.visibleModels)

  return {
    async create({ model: name, data }) {
      const model = find(name)
      const access = checkCall(policy, model, { caller, action: 'crud_create' })
      const values = parseData(model, data, access.creatable, 'create')
      // Then the REST request's own checks on the values (lengths, formats, required fields).
      if (access.requests.create) checkRequest(model, access.requests.create, data)
      await authorizeCall(policy, model, { caller, action: 'crud_create', data: fieldsOf(values) })
      const tenant = tenantOf(model, access, caller)
      if (tenant) values.set(tenant.column, checkTenantValue(tenant, values.get(tenant.column)))
      // Timestamps the database does not fill are set here; then both are, from one reading.
      const stamps = model.columns.filter(
        (column) => TIMESTAMP_FIELDS.includes(column.name) && !values.has(column),
      )
      if (stamps.some((column) => !column.hasDefault)) {
        const now = readClock(database.dialect)
        for (const column of stamps) {
          const value = now(column)
          if (value !== undefined) values.set(column, value)
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
      await counts.invalidate(model.tableName)
      const key = model.columns.find((column) => column.primaryKey)
      await changed(model, 'created', key && (created as Record<string, unknown>)[key.key])
      return serialize(access.readable, created)
    },

    async list(input, options) {
      const model = find(input.model)
      const access = checkCall(policy, model, { caller, action: 'crud_list' })
      return run(`list ${model.resource}`, () =>
        listRecords(database, counts, policy, model, access, caller, input, options?.signal),
      )
    },

    async aggregate(input) {
      const model = find(input.model)
      const access = checkCall(policy, model, { caller, action: 'crud_list' })
      return run(`aggregate ${model.resource}`, () =>
        aggregateRecords(database, policy, model, access, caller, input),
      )
    },

    async update({ model: name, id, data }) {
      const model = find(name)
      const key = requirePrimaryKey(model)
      if (Object.keys(data).length === 0)
        throw new ToolError('data must name at least one field to change')
      if (key.name in data)
        throw new ToolError(`${key.name} is the primary key and cannot be changed`)
      const access = checkCall(policy, model, { caller, action: 'crud_update' })
      const values = parseData(model, data, access.updatable, 'update')
      if (access.requests.update) checkRequest(model, access.requests.update, data)
      const tenant = tenantOf(model, access, caller)
      if (tenant && values.has(tenant.column)) checkTenantValue(tenant, values.get(tenant.column))
      const trash = softDeleteColumn(model.table)
      const where = and(
        rowCondition(model, key, id, tenant),
        rowsOf(access, caller),
        trash && notTrashed(trash),
      )!
      await authorizeCall(policy, model, {
        caller,
        action: 'crud_update',
        id,
        data: fieldsOf(values),
      })
      const updatedAt = model.columns.find((column) => column.name === 'updated_at')
      if (updatedAt && !values.has(updatedAt)) {
        const now = readClock(database.dialect)(updatedAt)
        if (now !== undefined) values.set(updatedAt, now)
      }
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
      // An update adds or removes no record, but moves records in and out of filtered counts.
      await counts.invalidate(model.tableName)
      await changed(model, 'updated', id)
      return serialize(access.readable, updated as JsonRecord)
    },

    async delete({ model: name, id }) {
      const model = find(name)
      const key = requirePrimaryKey(model)
      const access = checkCall(policy, model, { caller, action: 'crud_delete' })
      const trash = softDeleteColumn(model.table)
      const where = and(
        rowCondition(model, key, id, tenantOf(model, access, caller)),
        rowsOf(access, caller),
        trash && notTrashed(trash),
      )!
      await authorizeCall(policy, model, { caller, action: 'crud_delete', id })
      const deleted = await run(`delete ${model.resource}`, async () => {
        // A model with `deleted_at` is deleted softly, as the REST destroy does.
        if (trash) return softDelete(database, model, trash, where)
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
      await counts.invalidate(model.tableName)
      await changed(model, 'deleted', id)
      return { message: 'Deleted', id }
    },
  }
}

/** Sets `deleted_at` (the database's clock on Postgres, the app's on SQLite); the rows changed. */
async function softDelete(
  database: Database,
  model: McpModel,
  trash: Column,
  where: SQL,
): Promise<number> {
  const column = model.columns.find((c) => c.name === trash.name)
  const now = column && readClock(database.dialect)(column)
  const set = { [column?.key ?? trash.name]: now ?? new Date() }
  if (database.dialect === 'postgres') {
    const rows = await pgDb(database)
      .update(model.table as PgTable)
      .set(set as PgUpdateSetSource<PgTable>)
      .where(where)
      .returning()
    return rows.length
  }
  return database.db
    .update(model.table as SQLiteTable)
    .set(set as SQLiteUpdateSetSource<SQLiteTable>)
    .where(where)
    .run().changes
}

/** Parsed values by column name, as the `authorize` hook sees them. */
function fieldsOf(values: Map<McpColumn, unknown>): Record<string, unknown> {
  const fields: Record<string, unknown> = {}
  for (const [column, value] of values) fields[column.name] = value
  return fields
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
  // A WITHOUT ROWID table has no row id to read back by: the INSERT returns the row itself,
  // found by its primary key. Every other table keeps the spec's "last inserted row id".
  if (withoutRowid(database, getTableName(table))) {
    const [created] = database.db.insert(table).values(row).returning().all()
    return created
  }
  const result = database.db.insert(table).values(row).run()
  const [created] = await database.db
    .select()
    .from(table)
    .where(sql`rowid = ${result.lastInsertRowid}`)
    .limit(1)
  return created
}

function withoutRowid(database: SqliteDatabase, tableName: string): boolean {
  const [info] = database.db.all<{ wr: number }>(
    sql`select wr from pragma_table_list where name = ${tableName} and schema = 'main'`,
  )
  return info?.wr === 1
}
