import { createRecordCounter, type Realtime, type RecordCounter } from '../../api/index.ts'
import type { Logger } from '../../core/index.ts'
import type { Database } from '../../db/index.ts'
import type { AuditTrail } from '../audit/audit-trail.ts'
import { auditedCrud } from '../audit/audited-crud.ts'
import { ToolError } from '../tool-error.ts'
import {
  type AccessPolicy,
  checkCall,
  type McpAccessOptions,
  type McpCaller,
  type McpQueries,
} from './access.ts'
import { resolveAccess } from './access-resolve.ts'
import { aggregateRecords } from './crud-aggregate.ts'
import type { Crud } from './crud-contract.ts'
import { DEFAULT_PER_PAGE, type JsonRecord, MAX_PER_PAGE, resolveModel } from './crud-input.ts'
import { type ListInput, type ListResult, listRecords } from './crud-list.ts'
import { toolWrites } from './crud-writes.ts'
import { guardDatabase } from './database-errors.ts'
import type { McpModelSource } from './models.ts'
import type { McpRequests } from './request-schemas.ts'

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
   * feed by the same resource operations REST writes through, so streams and subscriptions hear it.
   */
  realtime?: Realtime | undefined
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
  const policy = accessPolicyOf(options)
  const run = <T>(action: string, work: () => Promise<T>) => guardDatabase(action, work, logger)
  const find = (name: string) => resolveModel(models, name, policy.visibleModels)

  return {
    ...toolWrites({ policy, database, counts, realtime: options.realtime, caller, run, find }),
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
  }
}
