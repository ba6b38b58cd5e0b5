import { eq, type Table } from 'drizzle-orm'
import {
  foreignKeyRelations,
  type ListQueryDefinition,
  type RecordCounter,
  type RelationSpec,
  runListQuery,
} from '../../api/index.ts'
import {
  buildListQuery,
  describeFields,
  type QueryField,
  type ResolvedRelation,
  recordMaker,
  type SoftDelete,
  softDeleteColumn,
  softDeletes,
} from '../../api/internal.ts'
import { ValidationError } from '../../core/errors.ts'
import type { Database } from '../../db/index.ts'
import { classifyColumn } from '../../db/models/columns.ts'
import { ToolError } from '../tool-error.ts'
import {
  type AccessPolicy,
  authorizeCall,
  type McpCaller,
  type ModelAccess,
  policyCaller,
} from './access.ts'
import { checkFilterFields, checkPaging, type ListInput, toUrl } from './crud-arguments.ts'
import { drizzleColumn, type JsonRecord, tenantOf } from './crud-input.ts'
import type { McpModel } from './models.ts'

export type { Filters, FilterValue, ListInput } from './crud-arguments.ts'

/**
 * The ids of the records each `crud_list` page read, for the audit trail: kept beside the page,
 * never on it (the SDK validates a tool's structured answer key by key, a symbol key included),
 * so `fields` without the key does not lose them.
 */
const listedIds = new WeakMap<ListResult, (string | number)[]>()

/** The ids of the records `page` read, when crud_list made it. */
export function listedIdsOf(page: ListResult): (string | number)[] | undefined {
  return listedIds.get(page)
}

/** What `crud_list` returns: one page of records. */
export interface ListResult {
  records: JsonRecord[]
  /** null with `count: 'none'` (the default of cursor pages). */
  total: number | null
  /** null on cursor pages. */
  page: number | null
  per_page: number
  next_cursor?: string | null
  prev_cursor?: string | null
}

interface ModelQuery {
  definition: ListQueryDefinition
  /** The model each relation of `definition` reads. */
  targets: Map<string, McpModel>
}

/** By the model's access, which a late declaration replaces (`AccessPolicy.of`). */
const queries = new WeakMap<ModelAccess, ModelQuery>()

/**
 * The model's list grammar under the policy: `fields`, `filter`, `sort` and `search` over the
 * readable columns only, and `include` only of relations whose key is readable here and whose
 * model the policy lets `crud_list` read, its records cut to that model's readable columns.
 */
export function listQueryOf(
  policy: AccessPolicy,
  model: McpModel,
  access: ModelAccess,
): ModelQuery {
  let query = queries.get(access)
  if (query) return query
  query = access.query ? fromListQuery(policy, access.query) : ownQuery(policy, model, access)
  // Each included model is read under its own access: its readable fields and its row filter.
  for (const [name, relation] of query.definition.relations) {
    const related = policy.of(query.targets.get(name)!)!
    const shown = new Set(related.readable.map((column) => column.name))
    relation.fields = describeFields(relation.table).filter((field) => shown.has(field.name))
    relation.rows = related.rows
  }
  queries.set(access, query)
  return query
}

/** A model reachable only by relations whose model the policy lets `crud_list` read. */
function listableTarget(policy: AccessPolicy, table: Table): McpModel | undefined {
  const target = policy.visibleModels.find((candidate) => candidate.table === table)
  return target && policy.of(target)?.tools.has('crud_list') ? target : undefined
}

/**
 * The app's REST list query as the tools read it: the same fields, filter, sort, search and
 * row filter; its relations to models the tools can list (the policy decided access to them,
 * so no API scope is asked); records as their columns (not the REST resource).
 */
function fromListQuery(policy: AccessPolicy, base: ListQueryDefinition): ModelQuery {
  const targets = new Map<string, McpModel>()
  const relations = new Map<string, ResolvedRelation>()
  for (const [name, relation] of base.relations) {
    const target = listableTarget(policy, relation.table)
    if (!target) continue
    relations.set(name, { ...relation, readScope: undefined })
    targets.set(name, target)
  }
  const record = recordMaker(base.fields, base.withheld, undefined)
  return { definition: { ...base, relations, resource: undefined, record }, targets }
}

/** The model's list grammar from the policy alone, for a model without a list query. */
function ownQuery(policy: AccessPolicy, model: McpModel, access: ModelAccess): ModelQuery {
  const readable = access.readable
  const readableNames = new Set(readable.map((column) => column.name))
  const tables = policy.visibleModels.map((candidate) => candidate.table)
  const targets = new Map<string, McpModel>()
  const include: Record<string, RelationSpec> = {}
  for (const [name, spec] of Object.entries(foreignKeyRelations(model.table, tables))) {
    const target = listableTarget(policy, spec.table)
    if (!target) continue
    if (!readableNames.has(spec.local.name)) continue
    include[name] = spec
    targets.set(name, target)
  }
  let definition: ListQueryDefinition
  try {
    // The policy's readable columns were checked by the credential rule (and its opt-ins).
    const names = readable.map((column) => column.name)
    definition = buildListQuery(
      model.table,
      {
        fields: names,
        expose: names,
        include,
        // The model's declared row filter (its defineListQuery's `rows`), if any.
        rows: access.rows,
        search: readable
          .filter((column) => classifyColumn(column).kind === 'text')
          .map((column) => column.name),
      },
      // Each relation's model was checked against the tools' policy above and per call below.
      { relationScopes: false },
    )
  } catch (error) {
    throw new ToolError(`${model.resource} cannot be listed: ${(error as Error).message}`)
  }
  return { definition, targets }
}

/** One relation `include` can attach, as the model resources describe it. */
export interface IncludableRelation {
  name: string
  kind: 'belongs-to' | 'has-many'
  /** The model the relation reads. */
  model: McpModel
  /** The field of this model it starts from, and the field of the other model it matches. */
  local: string
  remote: string
  /** has-many: most records attached per record. */
  limit: number
}

/**
 * `crud_list`'s grammar of a model under the policy, the one the tool checks its arguments
 * against: the fields it shows (readable ones), filters, sorts and searches on, and the
 * relations `include` may attach (before the caller's grant and tenancy narrow them).
 */
export function listGrammarOf(
  policy: AccessPolicy,
  model: McpModel,
  access: ModelAccess,
): {
  fields: QueryField[]
  filterable: QueryField[]
  sortable: string[]
  search: string[]
  relations: IncludableRelation[]
} {
  const { definition, targets } = listQueryOf(policy, model, access)
  return {
    fields: definition.fields,
    filterable: [...definition.filterable.values()],
    sortable: [...definition.sortable.keys()],
    search: definition.search.map((field) => field.name),
    relations: [...definition.relations.values()].map((relation) => ({
      name: relation.name,
      kind: relation.kind,
      model: targets.get(relation.name)!,
      local: relation.local.name,
      remote: relation.remote.name,
      limit: relation.limit,
    })),
  }
}

/**
 * `crud_list` after `checkCall`: the REST list grammar (filters with operators, sort, fields,
 * include, search, cursor, count) on the caller's readable columns, within its tenant. `total`
 * comes from `counts`, the REST list's counter when the app shares it.
 */
export async function listRecords(
  database: Database,
  counts: RecordCounter,
  policy: AccessPolicy,
  model: McpModel,
  access: ModelAccess,
  caller: McpCaller | undefined,
  input: ListInput,
  signal?: AbortSignal,
): Promise<ListResult> {
  checkPaging(input)
  const { definition, targets } = listQueryOf(policy, model, access)
  checkFilterFields(definition, model, input.filters)
  await authorizeCall(policy, model, { caller, action: 'crud_list' })
  const scoped = await scopeRelations(policy, definition, targets, caller, input.include ?? [])
  const tenant = tenantOf(model, access, caller)
  const scope = tenant && {
    where: eq(drizzleColumn(model, tenant.column), tenant.value),
    key: `tenant:${String(tenant.value)}`,
  }
  // The key is read even when `fields` leaves it out: the audit trail records what was read.
  const key = definition.primaryKey
  const keyLeftOut =
    key && input.fields && !input.fields.includes(key.name) && definition.fields.includes(key)
      ? key.name
      : undefined
  const read = keyLeftOut ? { ...input, fields: [...(input.fields ?? []), keyLeftOut] } : input
  let envelope: Awaited<ReturnType<typeof runListQuery>>
  try {
    envelope = await runListQuery(scoped, toUrl(read), {
      db: database.db,
      counts,
      scope,
      // The row filters of the model and of each included one see the caller.
      caller: policyCaller(caller),
      signal,
      softDelete: softDeleteOfModel(model),
    })
  } catch (error) {
    invalidArguments(error, 'list', model)
  }
  const { data, meta } = envelope
  const result: ListResult = {
    records: keyLeftOut ? data.map(({ [keyLeftOut]: _, ...shown }) => shown) : data,
    total: meta.total,
    page: meta.current_page ?? null,
    per_page: meta.per_page,
  }
  if (input.cursor !== undefined) {
    result.next_cursor = meta.next_cursor ?? null
    result.prev_cursor = meta.prev_cursor ?? null
  }
  const ids = key ? data.map((record) => record[key.name]).filter(isId) : []
  listedIds.set(result, ids)
  return result
}

/**
 * The definition for this caller: each requested relation limited to the caller's tenant on
 * its model (fail closed: a model tenants cannot read is not includable), after the app's
 * `authorize` hook allowed reading that model too.
 */
async function scopeRelations(
  policy: AccessPolicy,
  definition: ListQueryDefinition,
  targets: Map<string, McpModel>,
  caller: McpCaller | undefined,
  requested: readonly string[],
): Promise<ListQueryDefinition> {
  const relations = new Map(definition.relations)
  for (const name of new Set(requested)) {
    const relation = relations.get(name)
    const target = targets.get(name)
    if (!relation || !target) continue
    const access = policy.of(target)!
    if (caller?.tenantId !== undefined && !access.tenantColumn && !access.global) {
      throw new ToolError(`include: ${target.resource} is not available to tenants`)
    }
    await authorizeCall(policy, target, { caller, action: 'crud_list' })
    const tenant = tenantOf(target, access, caller)
    if (tenant)
      relations.set(name, {
        ...relation,
        where: eq(drizzleColumn(target, tenant.column), tenant.value),
      })
  }
  return { ...definition, relations }
}

function isId(value: unknown): value is string | number {
  return typeof value === 'string' || typeof value === 'number'
}

/**
 * A model's soft delete as the tools read it: its `deleted_at` column hides trashed records
 * from crud_list and crud_aggregate alike, as the REST list and aggregate hide them. No tool
 * argument shows the trash.
 */
export function softDeleteOfModel(model: McpModel): SoftDelete | undefined {
  const trash = softDeleteColumn(model.table)
  return trash && softDeletes(trash)
}

/** A query's 422 as the tool's error (`Invalid list arguments for posts: …`); anything else rethrown. */
export function invalidArguments(error: unknown, tool: string, model: McpModel): never {
  if (!(error instanceof ValidationError)) throw error
  const problems = Object.entries(error.errors).map(
    ([param, messages]) => `${param}: ${messages.join(', ')}`,
  )
  throw new ToolError(`Invalid ${tool} arguments for ${model.resource}: ${problems.join('; ')}`)
}
