import type { SQL } from 'drizzle-orm'
import type { ListQueryDefinition } from '../../api/index.ts'
import { softDeleteColumn } from '../../api/internal.ts'
import type { CredentialOptions, PolicyCaller, RowFilter } from '../../db/index.ts'
import {
  type ModelReadPolicy,
  type ModelWritePolicy,
  readPolicyOf,
  writePolicyOf,
} from '../../db/models/policy.ts'
import type { AccessGrant, GrantAction, GrantableAccess } from '../../oauth/index.ts'
import { RefusedError } from '../tool-error.ts'
import {
  findModel,
  isSensitiveField,
  type McpColumn,
  type McpModel,
  type McpModelSource,
  TIMESTAMP_FIELDS,
} from './models.ts'
import {
  columnsOfRequest,
  type McpRequests,
  type RequestSchema,
  requestFields,
} from './request-schemas.ts'

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

/** The read and write policies declared for a model's table (undefined where none). */
type Declarations = readonly [ModelReadPolicy | undefined, ModelWritePolicy | undefined]

/**
 * The request schemas declared for the model's table (`declareRequests`), each kept only when
 * every field it takes is a column: a schema that takes `password` to hash is REST's alone.
 */
function declaredRequests(model: McpModel): McpRequests[string] {
  const declared = writePolicyOf(model.table) as McpRequests[string] | undefined
  const columnsOnly = (schema: RequestSchema | undefined) => {
    const fields = schema && requestFields(schema)
    return fields?.every((field) => model.columns.some((column) => column.name === field))
      ? schema
      : undefined
  }
  return { create: columnsOnly(declared?.create), update: columnsOnly(declared?.update) }
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

/**
 * Resolves the access options against the models once, at start-up. Unknown models or
 * fields, and credential fields in an allow-list, are programmer errors (a `TypeError`).
 */
export function resolveAccess(
  source: McpModelSource,
  options: McpAccessOptions = {},
  queries: McpQueries = {},
  requests: McpRequests = {},
): AccessPolicy {
  const unlisted = options.unlisted ?? 'none'
  const queryOf = new Map<McpModel, ListQueryDefinition>()
  for (const [name, query] of Object.entries(queries)) {
    const model = findModel(source, name)
    if (!model) throw new TypeError(`mcp queries: unknown model "${name}"`)
    if (query.table !== model.table) {
      throw new TypeError(`mcp queries: ${name} is the list query of ${query.tableName}`)
    }
    queryOf.set(model, query)
  }
  const requestsOf = new Map<McpModel, McpRequests[string]>()
  for (const [name, schemas] of Object.entries(requests)) {
    const model = findModel(source, name)
    if (!model) throw new TypeError(`mcp requests: unknown model "${name}"`)
    requestsOf.set(model, schemas)
  }
  const byModel = new Map<McpModel, McpModelAccess>()
  for (const [name, access] of Object.entries(options.models ?? {})) {
    const model = findModel(source, name)
    if (!model) throw new TypeError(`mcp access: unknown model "${name}"`)
    byModel.set(model, access)
  }
  const tenantName = options.tenantColumn ?? 'tenant_id'
  const resolved = new Map<McpModel, ModelAccess>()
  /**
   * The declared read and write policies each model was resolved under, for the models whose
   * list query or request schemas were not handed over: a declaration made later (a controller
   * imported after the tools were made) is read on the model's next use.
   */
  const resolvedUnder = new Map<McpModel, Declarations>()
  const declarationsOf = (model: McpModel): Declarations => [
    readPolicyOf(model.table),
    writePolicyOf(model.table),
  ]
  const resolveModel = (model: McpModel, listed: McpModelAccess | undefined): ModelAccess => {
    const defaults = !listed && unlisted === 'all' ? DATA_TOOL_NAMES : (['crud_list'] as const)
    const tools = new Set<DataToolName>(listed?.tools ?? defaults)
    const approval = new Set<DataToolName>()
    for (const tool of listed?.approval ?? options.approval ?? DEFAULT_APPROVAL) {
      if (!DATA_TOOL_NAMES.includes(tool) || accessOf(tool) === 'read') {
        throw new TypeError(
          `mcp access: approval of ${model.resource}: "${tool}" is not a write tool`,
        )
      }
      if (tools.has(tool)) approval.add(tool)
    }
    const credentials = { expose: listed?.expose }
    for (const name of listed?.expose ?? []) {
      if (!model.columns.some((column) => column.name === name)) {
        throw new TypeError(`mcp access: ${model.resource}.${name} in expose: no such field`)
      }
    }
    const query = queryOf.get(model)
    if (query && listed?.read) {
      throw new TypeError(
        `mcp access: ${model.resource}.read: its readable fields are its list query's (queries.${model.resource}); change them there`,
      )
    }
    // Without its list query handed over, the model's declared read policy (its
    // defineListQuery, beside its controller) still rules: no field it hides (but one `expose`
    // opts in by name), and its rows.
    const declared = query ? undefined : readPolicyOf(model.table)
    let readable = query
      ? model.columns.filter((column) => query.fields.some((field) => field.name === column.name))
      : pick(model, listed?.read, readableColumns(model, credentials), 'read')
    if (declared) {
      const hidden = (column: McpColumn) =>
        !declared.readable.has(column.name) && !listed?.expose?.includes(column.name)
      const named = listed?.read ? readable.find(hidden) : undefined
      if (named) {
        throw new TypeError(
          `mcp access: ${model.resource}.${named.name} in read: its list query does not show it; change it there`,
        )
      }
      readable = readable.filter((column) => !hidden(column))
    }
    const handed = requestsOf.get(model)
    if ((handed?.create || handed?.update) && listed?.write) {
      throw new TypeError(
        `mcp access: ${model.resource}.write: its writable fields are its request schemas' (requests.${model.resource}); change them there`,
      )
    }
    // Without them handed over, the schemas declared beside the controller (declareRequests)
    // still rule: `write` may name fewer of their fields, never one they do not take.
    const request = handed ?? declaredRequests(model)
    const writable = pick(model, listed?.write, writableColumns(model, credentials), 'write')
    const ofRequest = (kind: 'create' | 'update', fallback: McpColumn[]) => {
      const schema = request[kind]
      if (!schema) return fallback
      const taken = columnsOfRequest(model, schema, writableColumns(model, credentials), kind)
      if (!listed?.write) return taken
      const outside = writable.find((column) => !taken.includes(column) && !column.primaryKey)
      if (outside) {
        throw new TypeError(
          `mcp access: ${model.resource}.${outside.name} in write: its ${kind} request does not take it; change it there`,
        )
      }
      return taken.filter((column) => writable.includes(column))
    }
    const tenantColumn = model.columns.find((column) => column.name === tenantName)
    const global = listed?.global === true
    if (options.requireTenant && !tenantColumn && !global) {
      throw new TypeError(
        `mcp access: ${model.resource} has no ${tenantName} column; declare it global or unlisted`,
      )
    }
    return {
      tools,
      readable,
      query,
      rows: query?.rows ?? declared?.rows,
      creatable: ofRequest(
        'create',
        writable.filter((column) => !(column.primaryKey && isGenerated(column))),
      ),
      updatable: ofRequest(
        'update',
        writable.filter((column) => !column.primaryKey),
      ).filter((column) => !column.primaryKey),
      requests: request,
      tenantColumn,
      global,
      approval,
    }
  }
  for (const model of source.models) {
    const listed = byModel.get(model)
    if (!listed && unlisted === 'none') continue
    resolved.set(model, resolveModel(model, listed))
    if (!queryOf.has(model) || !requestsOf.has(model))
      resolvedUnder.set(model, declarationsOf(model))
  }
  return {
    // A controller imported after the tools were made declares its model's policies late:
    // the first use after that reads and writes the model under them, never under the wider
    // defaults.
    of(model) {
      const under = resolvedUnder.get(model)
      if (under) {
        const now = declarationsOf(model)
        if (now[0] !== under[0] || now[1] !== under[1]) {
          resolvedUnder.set(model, now)
          resolved.set(model, resolveModel(model, byModel.get(model)))
        }
      }
      return resolved.get(model)
    },
    visibleModels: [...resolved.keys()],
    tools: new Set([...resolved.values()].flatMap((access) => [...access.tools])),
    authorize: options.authorize,
    requireTenant: options.requireTenant === true,
    scopes: options.scopes ?? DEFAULT_TOOL_SCOPES,
  }
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

/** Every column but credentials (those the app exposes aside). */
function readableColumns(model: McpModel, credentials: CredentialOptions): McpColumn[] {
  return model.columns.filter((column) => !isSensitiveField([column.name, column.key], credentials))
}

/**
 * Every column but credentials, the timestamps kiln maintains and `deleted_at`, which only a
 * (soft) delete sets (the REST rule).
 */
function writableColumns(model: McpModel, credentials: CredentialOptions): McpColumn[] {
  const trash = softDeleteColumn(model.table)?.name
  return readableColumns(model, credentials).filter(
    (column) => !TIMESTAMP_FIELDS.includes(column.name) && column.name !== trash,
  )
}

function isGenerated(column: McpColumn): boolean {
  return column.autoIncrement || column.hasDefault
}

function pick(
  model: McpModel,
  names: readonly string[] | undefined,
  allowed: McpColumn[],
  kind: 'read' | 'write',
): McpColumn[] {
  if (!names) return allowed
  return names.map((name) => {
    const column = allowed.find((candidate) => candidate.name === name)
    if (!column) {
      const why = model.columns.some((c) => c.name === name)
        ? kind === 'read'
          ? 'a credential field is never readable unless listed in expose'
          : 'credentials (unless listed in expose) and created_at/updated_at are never writable'
        : 'no such field'
      throw new TypeError(`mcp access: ${model.resource}.${name} in ${kind}: ${why}`)
    }
    return column
  })
}
