import { and, eq } from 'drizzle-orm'
import { type RecordCounter, runListQuery } from '../../api/index.ts'
import type { Database } from '../../db/index.ts'
import {
  type AccessPolicy,
  authorizeCall,
  checkCall,
  type McpCaller,
  policyCaller,
} from './access.ts'
import { drizzleColumn, tenantOf } from './crud-input.ts'
import { listQueryOf, softDeleteOfModel } from './crud-list.ts'
import { type McpModel, primaryKeyOf } from './models.ts'
import { reachableModels } from './reach.ts'
import { modelUri } from './resources.ts'

/**
 * What a resource subscription asks of the data tools: which model resources a caller may
 * subscribe to, and whether a changed record is in its view. Both are the read rule of
 * `crud_list`, so a subscription never tells a caller about a model or row a list would not
 * show it.
 */
export interface ModelWatch {
  /**
   * The URIs of `uris` that name a model resource (`kiln://models/{model}`) the caller may
   * list (scope, grant, policy, tenancy), in the order given. Any other URI is left out.
   */
  subscribable(caller: McpCaller | undefined, uris: readonly string[]): string[]
  /** The URIs of every model resource the caller may list. */
  readable(caller: McpCaller | undefined): string[]
  /** The resource name (`posts`) of a model resource's URI (`kiln://models/posts`). */
  resourceOf(uri: string): string | undefined
  /**
   * Whether the record `id` of the model `resource` is in the caller's view now: what
   * `crud_list` filtered by its key would return (tenant, row filter, soft delete, `authorize`).
   */
  sees(caller: McpCaller | undefined, resource: string, id: string | number): Promise<boolean>
  /**
   * Whether a deleted record was in the caller's view: a soft-deleted one is read from the trash
   * under the same rules; a hard-deleted one cannot be read, and counts as seen only when nothing
   * narrows the caller's rows (no row filter, no tenant) or `seen` says it was.
   */
  sawDeleted(
    caller: McpCaller | undefined,
    resource: string,
    id: string | number,
    seen: boolean,
  ): Promise<boolean>
}

/** The watch of one app's data tools, reading with their database and counter. */
export function createModelWatch(
  policy: AccessPolicy,
  read: { database: Database; counts: RecordCounter },
): ModelWatch {
  const byResource = new Map(policy.visibleModels.map((model) => [model.resource, model]))
  const byUri = new Map(policy.visibleModels.map((model) => [modelUri(model), model]))
  const viewed = async (
    model: McpModel | undefined,
    caller: McpCaller | undefined,
    id: string | number,
    trashToo: boolean,
  ) => {
    if (!model) return false
    try {
      return await inView(policy, read, model, caller, id, trashToo)
    } catch {
      // A refusal (scope, grant, tenancy, `authorize`) or a key of the wrong type: not seen.
      return false
    }
  }
  return {
    subscribable(caller, uris) {
      const readable = new Set(this.readable(caller))
      return uris.filter((uri) => readable.has(uri))
    },
    readable(caller) {
      return reachableModels(policy, caller)
        .filter((reach) => reach.tools.includes('crud_list'))
        .map((reach) => modelUri(reach.model))
    },
    resourceOf(uri) {
      return byUri.get(uri)?.resource
    },
    sees: (caller, resource, id) => viewed(byResource.get(resource), caller, id, false),
    async sawDeleted(caller, resource, id, seen) {
      const model = byResource.get(resource)
      if (!model) return false
      if (softDeleteOfModel(model)) return viewed(model, caller, id, true)
      return seen || !narrowed(policy, model, caller)
    },
  }
}

/**
 * The list query of `crud_list` (its row filter, soft delete and the caller's tenant) narrowed
 * to one key: the key need not be a field the list may filter on.
 */
async function inView(
  policy: AccessPolicy,
  read: { database: Database; counts: RecordCounter },
  model: McpModel,
  caller: McpCaller | undefined,
  id: string | number,
  trashToo: boolean,
): Promise<boolean> {
  const key = primaryKeyOf(model)
  if (!key) return false
  const access = checkCall(policy, model, { caller, action: 'crud_list' })
  await authorizeCall(policy, model, { caller, action: 'crud_list' })
  const { definition } = listQueryOf(policy, model, access)
  const tenant = tenantOf(model, access, caller)
  const where = and(
    eq(drizzleColumn(model, key), id),
    tenant && eq(drizzleColumn(model, tenant.column), tenant.value),
  )
  const page = await runListQuery(definition, 'kiln://watch?per_page=1&count=none', {
    db: read.database.db,
    counts: read.counts,
    scope: where && { where, key: 'watch' },
    caller: policyCaller(caller),
    // Without the soft delete, trashed rows are read too (a deletion's record is in the trash).
    softDelete: trashToo ? undefined : softDeleteOfModel(model),
  })
  return page.data.length > 0
}

/** Whether the caller's rows are narrowed: a row filter, or a tenant on a tenant-scoped model. */
function narrowed(policy: AccessPolicy, model: McpModel, caller: McpCaller | undefined): boolean {
  const access = policy.of(model)
  if (!access) return true
  const { definition } = listQueryOf(policy, model, access)
  return definition.rows !== undefined || tenantOf(model, access, caller) !== undefined
}
