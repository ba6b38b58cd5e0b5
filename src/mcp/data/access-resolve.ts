import type { ListQueryDefinition } from '../../api/index.ts'
import { softDeleteColumn } from '../../api/internal.ts'
import type { CredentialOptions } from '../../db/index.ts'
import {
  type ModelReadPolicy,
  type ModelWritePolicy,
  readPolicyOf,
  writePolicyOf,
} from '../../db/models/policy.ts'
import {
  type AccessPolicy,
  accessOf,
  DATA_TOOL_NAMES,
  type DataToolName,
  DEFAULT_APPROVAL,
  DEFAULT_TOOL_SCOPES,
  type McpAccessOptions,
  type McpModelAccess,
  type McpQueries,
  type ModelAccess,
} from './access.ts'
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
  const queryOf = byModel(source, 'queries', queries)
  for (const [model, query] of queryOf) {
    if (query.table !== model.table) {
      throw new TypeError(`mcp queries: ${model.resource} is the list query of ${query.tableName}`)
    }
  }
  const requestsOf = byModel(source, 'requests', requests)
  const listedOf = byModel(source, 'access', options.models ?? {})
  const tenantName = options.tenantColumn ?? 'tenant_id'
  const resolveModel = (model: McpModel) =>
    resolveModelAccess(model, listedOf.get(model), {
      options,
      unlisted,
      query: queryOf.get(model),
      handed: requestsOf.get(model),
      tenantName,
    })
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
  for (const model of source.models) {
    if (!listedOf.has(model) && unlisted === 'none') continue
    resolved.set(model, resolveModel(model))
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
          resolved.set(model, resolveModel(model))
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

/** Entries by model, resource or table name, by their model; an unknown name is a TypeError. */
function byModel<T>(
  source: McpModelSource,
  option: string,
  entries: Readonly<Record<string, T>>,
): Map<McpModel, T> {
  const out = new Map<McpModel, T>()
  for (const [name, entry] of Object.entries(entries)) {
    const model = findModel(source, name)
    if (!model) throw new TypeError(`mcp ${option}: unknown model "${name}"`)
    out.set(model, entry)
  }
  return out
}

/** What the resolution of one model is given beside its allow-list entry. */
interface Given {
  options: McpAccessOptions
  unlisted: 'read' | 'none' | 'all'
  /** Its list query, when the app handed it over (`queries`). */
  query: ListQueryDefinition | undefined
  /** Its request schemas, when the app handed them over (`requests`). */
  handed: McpRequests[string] | undefined
  tenantName: string
}

/** One model's access: its tools and approvals, readable and writable fields, tenancy. */
function resolveModelAccess(
  model: McpModel,
  listed: McpModelAccess | undefined,
  given: Given,
): ModelAccess {
  const { options, query, tenantName } = given
  const defaults = !listed && given.unlisted === 'all' ? DATA_TOOL_NAMES : (['crud_list'] as const)
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
  for (const name of listed?.expose ?? []) {
    if (!model.columns.some((column) => column.name === name)) {
      throw new TypeError(`mcp access: ${model.resource}.${name} in expose: no such field`)
    }
  }
  // Without its list query handed over, the model's declared read policy (its
  // defineListQuery, beside its controller) still rules: its rows.
  const declared = query ? undefined : readPolicyOf(model.table)
  const readable = readableOf(model, listed, query)
  const writes = writableOf(model, listed, given.handed)
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
    ...writes,
    tenantColumn,
    global,
    approval,
  }
}

/**
 * The fields the tools read: the handed list query's, else the allow-list's `read` (or every
 * field but credentials) less what the model's declared read policy hides (but what `expose`
 * opts in by name).
 */
function readableOf(
  model: McpModel,
  listed: McpModelAccess | undefined,
  query: ListQueryDefinition | undefined,
): McpColumn[] {
  if (query && listed?.read) {
    throw new TypeError(
      `mcp access: ${model.resource}.read: its readable fields are its list query's (queries.${model.resource}); change them there`,
    )
  }
  if (query) {
    return model.columns.filter((column) => query.fields.some((f) => f.name === column.name))
  }
  const credentials = { expose: listed?.expose }
  const readable = pick(model, listed?.read, readableColumns(model, credentials), 'read')
  const declared = readPolicyOf(model.table)
  if (!declared) return readable
  const hidden = (column: McpColumn) =>
    !declared.readable.has(column.name) && !listed?.expose?.includes(column.name)
  const named = listed?.read ? readable.find(hidden) : undefined
  if (named) {
    throw new TypeError(
      `mcp access: ${model.resource}.${named.name} in read: its list query does not show it; change it there`,
    )
  }
  return readable.filter((column) => !hidden(column))
}

/**
 * The fields create and update take: the request schemas' (handed over, else declared beside
 * the controller with `declareRequests`), of which `write` may name fewer, never another; else
 * the allow-list's `write` (or every field but credentials and the timestamps kiln keeps).
 */
function writableOf(
  model: McpModel,
  listed: McpModelAccess | undefined,
  handed: McpRequests[string] | undefined,
): Pick<ModelAccess, 'creatable' | 'updatable' | 'requests'> {
  if ((handed?.create || handed?.update) && listed?.write) {
    throw new TypeError(
      `mcp access: ${model.resource}.write: its writable fields are its request schemas' (requests.${model.resource}); change them there`,
    )
  }
  const credentials = { expose: listed?.expose }
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
  const keyless = writable.filter((column) => !column.primaryKey)
  return {
    creatable: ofRequest(
      'create',
      writable.filter((column) => !(column.primaryKey && isGenerated(column))),
    ),
    updatable: ofRequest('update', keyless).filter((column) => !column.primaryKey),
    requests: request,
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
