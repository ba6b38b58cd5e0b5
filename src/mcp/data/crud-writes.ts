import { and, eq } from 'drizzle-orm'
import type {
  Realtime,
  RecordCounter,
  ResourceContext,
  ResourceDefinition,
} from '../../api/index.ts'
import { resourceWrites } from '../../api/internal.ts'
import { NotFoundError } from '../../core/errors.ts'
import type { Database, RowFilter } from '../../db/index.ts'
import { ToolError } from '../tool-error.ts'
import {
  type AccessPolicy,
  authorizeCall,
  checkCall,
  type McpCaller,
  type ModelAccess,
  policyCaller,
} from './access.ts'
import type { Crud } from './crud-contract.ts'
import {
  checkTenantValue,
  drizzleColumn,
  type JsonRecord,
  notFound,
  parseData,
  recordId,
  requirePrimaryKey,
  tenantOf,
  toRowObject,
} from './crud-input.ts'
import { listQueryOf, softDeleteOfModel } from './crud-list.ts'
import { type McpColumn, type McpModel, TIMESTAMP_FIELDS } from './models.ts'
import { checkRequest } from './request-schemas.ts'

/** store, update and destroy of one model, as the REST resource operations give them. */
export type ModelWrites = ReturnType<typeof resourceWrites>

/** By the model's access (a late declaration replaces it), then by the tools' context. */
const built = new WeakMap<ModelAccess, WeakMap<ResourceContext, ModelWrites>>()

/**
 * The writes of `crud_create`, `crud_update` and `crud_delete`: the REST resource operations
 * (`resourceWrites`) on the model as `crud_list` reads it, so that a write through either
 * surface is one statement, stamped, soft-deleted, counted and published alike. The tools check
 * their own arguments (`WriteCall.input`); what differs is who may reach which rows: the row
 * filter of the model, narrowed to the caller's tenant.
 */
export function modelWrites(
  policy: AccessPolicy,
  model: McpModel,
  access: ModelAccess,
  context: ResourceContext,
): ModelWrites {
  const byContext = built.get(access) ?? new WeakMap<ResourceContext, ModelWrites>()
  built.set(access, byContext)
  let writes = byContext.get(context)
  if (writes) return writes
  const { definition } = listQueryOf(policy, model, access)
  const rows: RowFilter = (caller) => {
    const own = definition.rows?.(caller)
    const tenant = tenantOf(model, access, caller)
    if (!tenant) return own
    const where = eq(drizzleColumn(model, tenant.column), tenant.value)
    const key = `tenant:${String(tenant.value)}`
    return own ? { where: and(own.where, where)!, key: `${own.key}:${key}` } : { where, key }
  }
  const resource = {
    ...definition,
    name: model.resource,
    // The tools read and check their own arguments; no request schema is parsed again.
    create: undefined,
    update: undefined,
    // Whatever the list query says, a deleted_at column is the trash here, as in crud_list.
    softDelete: softDeleteOfModel(model),
    rows,
  } as unknown as ResourceDefinition
  writes = resourceWrites(resource, context)
  byContext.set(context, writes)
  return writes
}

/** The operation's 404 as the tools word it: `No posts record with id 5`. */
export function missingAs(model: McpModel, id: string | number) {
  return (error: unknown): never => {
    throw error instanceof NotFoundError ? notFound(model, id) : error
  }
}

/** What the write tools share with the rest of a `Crud`. */
export interface WriteContext {
  policy: AccessPolicy
  database: Database
  counts: RecordCounter
  realtime: Realtime | undefined
  caller: McpCaller | undefined
  run<T>(action: string, work: () => Promise<T>): Promise<T>
  find(name: string): McpModel
}

/**
 * `crud_create`, `crud_update` and `crud_delete`: the policy's checks, the tool's own checks of
 * its arguments (in the REST 422's words), the app's `authorize` hook, then REST's operation.
 */
export function toolWrites(context: WriteContext): Pick<Crud, 'create' | 'update' | 'delete'> {
  const { policy, database, counts, realtime, caller, run, find } = context
  // One context per set of tools: the writes of a model are built once for it.
  const resources: ResourceContext = { db: database.db, counts, realtime }
  const writes = (model: McpModel, access: ModelAccess) =>
    modelWrites(policy, model, access, resources)

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
      requireFields(model, values)
      // REST's store: the timestamps, the insert, the count's invalidation.
      const input = toRowObject(values)
      const created = await run(`create ${model.resource}`, () =>
        writes(model, access).store({ caller: policyCaller(caller), input }),
      )
      return created.data as JsonRecord
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
      const record = recordId(model, key, id)
      await authorizeCall(policy, model, {
        caller,
        action: 'crud_update',
        id,
        data: fieldsOf(values),
      })
      // REST's update: `updated_at`, the caller's rows (its tenant's), never a trashed record.
      const input = toRowObject(values)
      const updated = await run(`update ${model.resource}`, () =>
        writes(model, access)
          .update({ caller: policyCaller(caller), id: record, input })
          .catch(missingAs(model, id)),
      )
      // An update adds or removes no record, but moves records in and out of filtered counts.
      await counts.invalidate(model.tableName)
      return updated.data as JsonRecord
    },

    async delete({ model: name, id }) {
      const model = find(name)
      const key = requirePrimaryKey(model)
      const access = checkCall(policy, model, { caller, action: 'crud_delete' })
      // A tenant its model's column cannot hold is refused before the app's hook is asked.
      tenantOf(model, access, caller)
      const record = recordId(model, key, id)
      await authorizeCall(policy, model, { caller, action: 'crud_delete', id })
      // REST's destroy: a model with `deleted_at` is deleted softly.
      await run(`delete ${model.resource}`, () =>
        writes(model, access)
          .destroy({ caller: policyCaller(caller), id: record })
          .catch(missingAs(model, id)),
      )
      return { message: 'Deleted', id }
    },
  }
}

/** A create's values: every column the database cannot fill is given (a tool error otherwise). */
function requireFields(model: McpModel, values: Map<McpColumn, unknown>): void {
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
}

/** Parsed values by column name, as the `authorize` hook sees them. */
function fieldsOf(values: Map<McpColumn, unknown>): Record<string, unknown> {
  const fields: Record<string, unknown> = {}
  for (const [column, value] of values) fields[column.name] = value
  return fields
}
