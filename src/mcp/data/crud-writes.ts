import { and, eq } from 'drizzle-orm'
import type { RecordCounter, ResourceDefinition } from '../../api/index.ts'
import { resourceWrites } from '../../api/internal.ts'
import { NotFoundError } from '../../core/errors.ts'
import type { Database, RowFilter } from '../../db/index.ts'
import type { AccessPolicy, ModelAccess } from './access.ts'
import { drizzleColumn, notFound, tenantOf } from './crud-input.ts'
import { listQueryOf, softDeleteOfModel } from './crud-list.ts'
import type { McpModel } from './models.ts'

/** store, update and destroy of one model, as the REST resource operations give them. */
export type ModelWrites = ReturnType<typeof resourceWrites>

/** By the model's access (a late declaration replaces it), then by the tools' counter. */
const built = new WeakMap<ModelAccess, WeakMap<RecordCounter, ModelWrites>>()

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
  database: Database,
  counts: RecordCounter,
): ModelWrites {
  const byCounter = built.get(access) ?? new WeakMap<RecordCounter, ModelWrites>()
  built.set(access, byCounter)
  let writes = byCounter.get(counts)
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
  writes = resourceWrites(resource, { db: database.db, counts })
  byCounter.set(counts, writes)
  return writes
}

/** The operation's 404 as the tools word it: `No posts record with id 5`. */
export function missingAs(model: McpModel, id: string | number) {
  return (error: unknown): never => {
    throw error instanceof NotFoundError ? notFound(model, id) : error
  }
}
