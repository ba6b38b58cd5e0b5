import { eq } from 'drizzle-orm'
import type { RecordCounter } from '../../api/index.ts'
import { listedRecord } from '../../api/internal.ts'
import type { Database } from '../../db/index.ts'
import {
  type AccessPolicy,
  authorizeCall,
  checkCall,
  type McpCaller,
  policyCaller,
} from './access.ts'
import { drizzleColumn, type JsonRecord, recordId, tenantOf } from './crud-input.ts'
import { listQueryOf, softDeleteOfModel } from './crud-list.ts'
import { type McpModel, primaryKeyOf } from './models.ts'
import { reachableModels } from './reach.ts'
import { modelUri, parseResourceUri } from './resources.ts'

/** What a subscribable URI names: a model, or one record of it (`id` set). */
export interface WatchTarget {
  /** The model's resource name (`posts`). */
  resource: string
  /** The record's id as the URI gives it (`kiln://models/posts/records/7`). */
  id?: string | undefined
}

/**
 * What a resource subscription asks of the data tools: which model and record resources a
 * caller may subscribe to, and whether a changed record is in its view. Both are the read rule
 * of `crud_list`, so a subscription never tells a caller about a model or row a list would not
 * show it.
 */
export interface ModelWatch {
  /**
   * The URIs of `uris` the caller may subscribe to, in the order given: a model resource
   * (`kiln://models/{model}`) it may list (scope, grant, policy, tenancy), or a record resource
   * (`kiln://models/{model}/records/{id}`) of one whose record is in its view now. Any other
   * URI is left out.
   */
  subscribable(caller: McpCaller | undefined, uris: readonly string[]): Promise<string[]>
  /** The URIs of every model resource the caller may list. */
  readable(caller: McpCaller | undefined): string[]
  /** The model (and record) a model or record resource's URI names. */
  targetOf(uri: string): WatchTarget | undefined
  /**
   * The record `id` of the model `resource` as `crud_list` filtered by its key would return it
   * to the caller now (tenant, row filter, soft delete, `authorize`), or undefined.
   */
  record(
    caller: McpCaller | undefined,
    resource: string,
    id: string | number,
  ): Promise<JsonRecord | undefined>
  /** Whether the record `id` of the model `resource` is in the caller's view now (`record`). */
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
  const viewed = async (
    model: McpModel | undefined,
    caller: McpCaller | undefined,
    id: string | number,
    trashToo: boolean,
  ) => {
    if (!model) return undefined
    try {
      return await inView(policy, read, model, caller, id, trashToo)
    } catch {
      // A refusal (scope, grant, tenancy, `authorize`) or a key of the wrong type: not seen.
      return undefined
    }
  }
  return {
    async subscribable(caller, uris) {
      const readable = new Set(this.readable(caller))
      const allowed = await Promise.all(
        uris.map(async (uri) => {
          const target = this.targetOf(uri)
          if (!target || !readable.has(modelUri(target.resource))) return false
          return target.id === undefined || this.sees(caller, target.resource, target.id)
        }),
      )
      return uris.filter((_, i) => allowed[i])
    },
    readable(caller) {
      return reachableModels(policy, caller)
        .filter((reach) => reach.tools.includes('crud_list'))
        .map((reach) => modelUri(reach.model))
    },
    targetOf(uri) {
      const target = parseResourceUri(uri)
      return target && byResource.has(target.resource) ? target : undefined
    },
    record: (caller, resource, id) => viewed(byResource.get(resource), caller, id, false),
    sees: async (caller, resource, id) =>
      (await viewed(byResource.get(resource), caller, id, false)) !== undefined,
    async sawDeleted(caller, resource, id, seen) {
      const model = byResource.get(resource)
      if (!model) return false
      if (softDeleteOfModel(model)) return (await viewed(model, caller, id, true)) !== undefined
      return seen || !narrowed(policy, model, caller)
    },
  }
}

/**
 * The record of `crud_list` (its list query, row filter, soft delete and the caller's tenant)
 * whose key is `id`, read by the list layer's one-record read: the key need not be a field the
 * list may filter on.
 */
async function inView(
  policy: AccessPolicy,
  read: { database: Database; counts: RecordCounter },
  model: McpModel,
  caller: McpCaller | undefined,
  id: string | number,
  trashToo: boolean,
): Promise<JsonRecord | undefined> {
  const key = primaryKeyOf(model)
  if (!key) return undefined
  const access = checkCall(policy, model, { caller, action: 'crud_list' })
  await authorizeCall(policy, model, { caller, action: 'crud_list' })
  const { definition } = listQueryOf(policy, model, access)
  const tenant = tenantOf(model, access, caller)
  return listedRecord(definition, drizzleColumn(model, key), recordId(model, key, id), {
    db: read.database.db,
    counts: read.counts,
    scope: tenant && {
      where: eq(drizzleColumn(model, tenant.column), tenant.value),
      key: `tenant:${String(tenant.value)}`,
    },
    caller: policyCaller(caller),
    // Without the soft delete, trashed rows are read too (a deletion's record is in the trash).
    softDelete: trashToo ? undefined : softDeleteOfModel(model),
  }) as Promise<JsonRecord | undefined>
}
/** Whether the caller's rows are narrowed: a row filter, or a tenant on a tenant-scoped model. */
function narrowed(policy: AccessPolicy, model: McpModel, caller: McpCaller | undefined): boolean {
  const access = policy.of(model)
  if (!access) return true
  const { definition } = listQueryOf(policy, model, access)
  return definition.rows !== undefined || tenantOf(model, access, caller) !== undefined
}
