import type { SQL } from 'drizzle-orm'
import type { ListQueryDefinition } from '../../api/index.ts'
import type { PolicyCaller, RowFilter } from '../../db/index.ts'
import type { AccessGrant, GrantAction, GrantableAccess } from '../../oauth/index.ts'
import { RefusedError } from '../tool-error.ts'
import type { McpColumn, McpModel } from './models.ts'
import type { RequestSchema } from './request-schemas.ts'

/**
 * The data tools an allow-list of a model may name (`crud_aggregate` goes with `crud_list`, under
 * its grant).
 */
export const DATA_TOOL_NAMES = ['crud_create', 'crud_list', 'crud_update', 'crud_delete'] as const
/** The name of a data tool (`crud_list`, `crud_create`, …). */
export type DataToolName = (typeof DATA_TOOL_NAMES)[number]
/** The tools that write: the ones a policy can put behind a person's approval. */
export type WriteToolName = Exclude<DataToolName, 'crud_list'>
/** What needs a person's approval when the policy says nothing: deleting a record. */
export const DEFAULT_APPROVAL: readonly WriteToolName[] = Object.freeze(['crud_delete'] as const)

/** Who calls the tools: the access token's subject, tenant and scopes, or nobody (local stdio). */
export interface McpCaller {
  userId?: string | undefined
  tenantId?: string | undefined
  /** The token's scopes; when given, every tool checks its own scope (`mcp:read`, `mcp:write`). */
  scopes?: readonly string[] | undefined
  clientId?: string | undefined
  /**
   * What the person granted on the consent page: per model, the actions allowed. When given,
   * a tool is listed only if some granted model allows it, and a model or action not granted
   * is refused (an `include` of it too). Undefined: the policy alone decides.
   */
  grant?: AccessGrant | undefined
}

/** The consent page's name for what each tool does. */
export const GRANT_ACTION_OF: Readonly<Record<DataToolName, GrantAction>> = {
  crud_list: 'read',
  crud_create: 'create',
  crud_update: 'update',
  crud_delete: 'delete',
}

/**
 * Whether the allow-list entry `name` reads or writes, by what it grants: the scope a call needs
 * (`mcp:read` or `mcp:write`). Each tool's descriptor names its entry (`allowedBy`), so a new
 * tool under `crud_list`'s entry reads; test/mcp/data/tool-descriptors.test.ts holds each
 * descriptor's own `access` to it.
 */
export function accessOf(name: DataToolName): 'read' | 'write' {
  return GRANT_ACTION_OF[name] === 'read' ? 'read' : 'write'
}

/** What one model allows through the data tools. */
export interface McpModelAccess {
  /** The tools that may act on this model. Default `['crud_list']` (read-only). */
  tools?: readonly DataToolName[]
  /**
   * Fields the tools return and filter on. Default: the fields of the model's list query
   * (`queries`), else every field but credentials (the names of `isCredentialField`:
   * `*password*`, `*_token`, `*secret*`, …). Not with a list query: it decides alone.
   */
  read?: readonly string[]
  /**
   * Fields a caller may set on create and update. Default: every field but credentials,
   * `created_at`/`updated_at` and database-generated primary keys.
   */
  write?: readonly string[]
  /** Rows shared by every tenant: the model needs no tenant column. */
  global?: boolean
  /**
   * Fields whose names look like credentials that the tools may read and write all the same,
   * one by one (`['api_key_prefix']`). Nothing credential-like is reachable otherwise.
   */
  expose?: readonly string[]
  /**
   * The writing tools whose calls on this model run only once the signed-in user approved that
   * exact change (docs/mcp/approvals.md). Default: the access options' `approval`, itself
   * `['crud_delete']` by default; `[]` for none.
   */
  approval?: readonly WriteToolName[]
}

/** One data-tool call, as an app's `authorize` hook sees it. */
export interface AuthorizeRequest {
  caller: McpCaller | undefined
  /** The model's resource name (`posts`). */
  model: string
  action: DataToolName
  /** The primary key, for `crud_update` and `crud_delete`. */
  id?: string | number | undefined
  /** The fields a create or update would write, already checked against the model. */
  data?: Readonly<Record<string, unknown>> | undefined
}

/** Decides one call after the allow-lists passed; `false` refuses it. It can only narrow. */
export type Authorize = (request: AuthorizeRequest) => boolean | Promise<boolean>

/** The access policy an app writes for `createDataTools({ access })`. */
export interface McpAccessOptions {
  /** Per model, by resource, model or table name. */
  models?: Readonly<Record<string, McpModelAccess>>
  /**
   * What models that are not listed allow: `none` (the default: an assistant reaches only the
   * models the app grants), `read` (`crud_list` only), or `all` (every tool: the developer's
   * own local stdio server).
   */
  unlisted?: 'read' | 'none' | 'all'
  authorize?: Authorize
  /** The column holding a row's tenant. Default `tenant_id`. */
  tenantColumn?: string
  /**
   * Every caller must have a tenant (a multi-tenant app): a call without one is refused, and a
   * reachable model with neither a tenant column nor `global: true` stops start-up.
   */
  requireTenant?: boolean
  /** The scopes that the reading and the writing tools need when the caller has scopes. */
  scopes?: { read: string; write: string }
  /**
   * The writing tools that wait for the signed-in user's approval on every model that does
   * not say otherwise. Default `['crud_delete']`; `[]` for none.
   */
  approval?: readonly WriteToolName[]
}

export const DEFAULT_TOOL_SCOPES = Object.freeze({ read: 'mcp:read', write: 'mcp:write' })

/**
 * The app's list query definitions (`defineListQuery`, beside each REST controller), by model,
 * resource or table name: a model that has one is read through the tools under the same rules
 * as through REST (its fields, filter, sort, search, includes and row filter).
 */
export type McpQueries = Readonly<Record<string, ListQueryDefinition>>

/** A model's resolved access: what the tools check on every call. */
export interface ModelAccess {
  tools: ReadonlySet<DataToolName>
  readable: readonly McpColumn[]
  /** The model's list query (REST's), when the app gave one: `crud_list` reads through it. */
  query: ListQueryDefinition | undefined
  /** The rows a caller may reach (the list query's `rows`): lists, includes, updates, deletes. */
  rows: RowFilter | undefined
  creatable: readonly McpColumn[]
  updatable: readonly McpColumn[]
  /** The REST request schemas, when the app gave them: writes are checked by them too. */
  requests: { create?: RequestSchema | undefined; update?: RequestSchema | undefined }
  tenantColumn: McpColumn | undefined
  global: boolean
  /** The tools allowed on this model whose calls need the user's approval. */
  approval: ReadonlySet<DataToolName>
}

/** The resolved access policy: what each model allows, checked on every call. */
export interface AccessPolicy {
  /** The access of a model; `undefined` when the tools cannot see it at all. */
  of(model: McpModel): ModelAccess | undefined
  /** The models any tool can see, and the tools any model allows. */
  visibleModels: readonly McpModel[]
  tools: ReadonlySet<DataToolName>
  authorize: Authorize | undefined
  requireTenant: boolean
  scopes: { read: string; write: string }
}

/** True when a call of `tool` on `model` runs only once the user approved it. */
export function needsApproval(policy: AccessPolicy, model: McpModel, tool: DataToolName): boolean {
  return policy.of(model)?.approval.has(tool) === true
}

/** The caller as a row filter sees it (`PolicyCaller`): undefined for the local stdio server. */
export function policyCaller(caller: McpCaller | undefined): PolicyCaller | undefined {
  if (!caller) return undefined
  const { userId, tenantId, clientId, scopes = [] } = caller
  return { scopes, userId, tenantId, clientId }
}

/** The model's row filter for this caller, as a condition (undefined: every row). */
export function rowsOf(access: ModelAccess, caller: McpCaller | undefined): SQL | undefined {
  return access.rows?.(policyCaller(caller))?.where
}

/** Refuses a call the allow-lists, scopes or tenancy rules do not allow. */
export function checkCall(
  policy: AccessPolicy,
  model: McpModel,
  request: Pick<AuthorizeRequest, 'caller' | 'action'>,
): ModelAccess {
  const access = policy.of(model)
  if (!access) throw new RefusedError(`Unknown model "${model.resource}"`)
  if (!access.tools.has(request.action)) {
    throw new RefusedError(`${request.action} is not allowed on ${model.resource}`)
  }
  // The tool's own descriptor says whether it reads or writes: a new read tool needs `read`.
  const needed = policy.scopes[accessOf(request.action)]
  const scopes = request.caller?.scopes
  if (scopes && !scopes.includes(needed)) {
    throw new RefusedError(`${request.action} needs the ${needed} scope`)
  }
  if (policy.requireTenant && request.caller?.tenantId === undefined) {
    throw new RefusedError('This server needs a caller with a tenant')
  }
  if (request.caller?.tenantId !== undefined && !access.tenantColumn && !access.global) {
    // Fail closed: a tenant's token must never reach rows that have no tenant.
    throw new RefusedError(`${model.resource} is not available to tenants`)
  }
  return access
}

/**
 * Refuses what the person did not grant, then runs the app's `authorize` hook, once the call
 * passed `checkCall` and its input was parsed (and for each model `include` reads).
 */
export async function authorizeCall(
  policy: AccessPolicy,
  model: McpModel,
  request: Omit<AuthorizeRequest, 'model'>,
): Promise<void> {
  if (!isGranted(request.caller, model.resource, request.action)) {
    throw notGranted(request.action, model)
  }
  if (policy.authorize && !(await policy.authorize({ ...request, model: model.resource }))) {
    throw new RefusedError(`Not allowed: ${request.action} on ${model.resource}`)
  }
}

/** The refusal of an action the person's grant leaves out on a model. */
export function notGranted(action: DataToolName, model: McpModel): RefusedError {
  return new RefusedError(`Not granted: ${action} on ${model.resource} (the user did not allow it)`)
}

/** True when the caller's grant (if it has one) allows this tool on this model. */
export function isGranted(
  caller: McpCaller | undefined,
  model: string,
  action: DataToolName,
): boolean {
  const grant = caller?.grant
  if (!grant) return true
  return Object.hasOwn(grant, model) && grant[model]!.includes(GRANT_ACTION_OF[action])
}

/** The tools to list for a caller: those the policy allows on some model its grant names. */
export function toolsFor(policy: AccessPolicy, caller: McpCaller | undefined): Set<DataToolName> {
  if (!caller?.grant) return new Set(policy.tools)
  const tools = new Set<DataToolName>()
  for (const model of policy.visibleModels) {
    for (const tool of policy.of(model)!.tools) {
      if (isGranted(caller, model.resource, tool)) tools.add(tool)
    }
  }
  return tools
}

/**
 * The policy as the consent page offers it (kilnjs/oauth `describeAccess`): each model the
 * tools can reach, with the actions its tools allow, and the tools' read and write scopes.
 */
export function describeAccess(policy: AccessPolicy): GrantableAccess {
  return {
    scopes: policy.scopes,
    models: policy.visibleModels.map((model) => {
      const tools = policy.of(model)!.tools
      return {
        model: model.resource,
        actions: Object.entries(GRANT_ACTION_OF)
          .filter(([tool]) => tools.has(tool as DataToolName))
          .map(([, action]) => action),
      }
    }),
  }
}
