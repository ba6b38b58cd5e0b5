import { getTableName, type Table } from 'drizzle-orm'
import type { z } from 'zod'
import { resourceName } from '../../db/models/inflect.ts'
import { defineListQuery, type ListQuery, resolveRelation } from '../query/definition.ts'
import type { ListQueryOptions } from '../query/options.ts'
import { foreignKeyRelations } from '../query/relations.ts'
import { type SoftDelete, softDeleteColumn, softDeletes } from '../rest/soft-delete.ts'
import { declareRequests } from '../rest/write-policy.ts'

/** The operations a resource may offer, by the name of the handler that serves each. */
export const RESOURCE_OPERATIONS = [
  'index',
  'show',
  'aggregate',
  'events',
  'store',
  'update',
  'destroy',
  'updateMany',
  'destroyMany',
  'restore',
] as const

/** The name of one operation of a resource (`index`, `store`, `destroyMany`…). */
export type ResourceOperation = (typeof RESOURCE_OPERATIONS)[number]

/** The operations that only read (`events` streams changes): the read scope; others the write scope. */
const READS: ReadonlySet<ResourceOperation> = new Set(['index', 'show', 'aggregate', 'events'])

/**
 * The scope each operation needs: `read` for index, show, aggregate and events, `write` for the rest
 * (defaults `<resource>:read` and `<resource>:write`), and any one operation apart
 * (`{ destroy: 'posts:admin' }`).
 */
export type ResourceScopes = { read?: string; write?: string } & Partial<
  Record<ResourceOperation, string>
>

/**
 * Options of `defineResource`: the list query's (fields, filter, sort, search, include, rows,
 * sensitive and exposed fields, limits…) and what the resource's writes take and need.
 */
export interface ResourceOptions<Row, Rec extends object, C, U> extends ListQueryOptions<Row, Rec> {
  /** The resource's name, in its paths and default scopes (default: the table's, `posts`). */
  name?: string
  /** What create and update take: the request schemas (here and in the MCP tools). */
  requests?: { create?: C; update?: U }
  /** The scope each operation needs (see `ResourceScopes`). */
  scopes?: ResourceScopes
  /** The operations offered (default: all; `restore` only with soft delete); others answer 405. */
  operations?: readonly ResourceOperation[]
  /**
   * Soft delete: with a `deleted_at` column (default: on when there is one), delete sets it,
   * lists, show and aggregates leave such records out, and `restore` clears it.
   */
  softDelete?: boolean
  /**
   * `foreign-keys` (default): `include=` takes, beside `include`, every relation the schema's
   * foreign keys give to the other resources, including those defined later. `declared`: only
   * `include`.
   */
  relations?: 'foreign-keys' | 'declared'
}

/** A resource, defined once: its list query with what its writes take and need. */
export interface ResourceDefinition<
  Row = Record<string, unknown>,
  Rec extends object = object,
  C extends z.ZodType = z.ZodType,
  U extends z.ZodType = z.ZodType,
> extends ListQuery<Row, Rec> {
  name: string
  create: C | undefined
  update: U | undefined
  /** The scope each operation needs. */
  scopes: Readonly<Record<ResourceOperation, string>>
  operations: ReadonlySet<ResourceOperation>
  softDelete: SoftDelete | undefined
}

/** The resources defined so far that take relations from the schema's foreign keys. */
const followingSchema = new Map<Table, ResourceDefinition>()

/**
 * Defines a resource: everything kiln knows about one model, declared once and read by every
 * surface (the REST operations, the OpenAPI documents, the MCP tools, `include=` from other
 * resources). Registers the model's read policy (`defineListQuery`) and its request schemas
 * (`declareRequests`). Every name is checked here: a mistake is a TypeError at start-up.
 * @example
 * ```ts
 * export const postsResource = defineResource(posts, {
 *   fields: ['id', 'title', 'body', 'author_id'],
 *   search: ['title', 'body'],
 *   resource: toPostResource,
 *   requests: { create: CreatePostRequest, update: UpdatePostRequest },
 * })
 * ```
 */
export function defineResource<
  T extends Table,
  Rec extends object = Record<string, unknown>,
  C extends z.ZodType = z.ZodType,
  U extends z.ZodType = z.ZodType,
>(
  table: T,
  options: ResourceOptions<T['$inferSelect'], Rec, C, U> = {},
): ResourceDefinition<T['$inferSelect'], Rec, C, U> {
  const { requests = {}, operations, relations = 'foreign-keys' } = options
  const name = options.name ?? resourceName(getTableName(table))
  const scopes = scopesOf(name, options.scopes ?? {}, options.readScope)
  const query = defineListQuery(table, { ...options, readScope: scopes.index })
  const column = options.softDelete === false ? undefined : softDeleteColumn(table)
  if (options.softDelete && !column) {
    throw new TypeError(`defineResource(${query.tableName}): softDelete needs a deleted_at column`)
  }
  const offered = new Set(operations ?? RESOURCE_OPERATIONS)
  if (!column) offered.delete('restore')
  for (const operation of offered) {
    if (!RESOURCE_OPERATIONS.includes(operation)) {
      throw new TypeError(`defineResource(${query.tableName}): unknown operation "${operation}"`)
    }
  }
  declareRequests(table, requests)
  const resource = Object.assign(query, {
    name,
    create: requests.create,
    update: requests.update,
    scopes,
    operations: offered,
    // Trashed records are listed (`filter[trashed]`) by keys that may restore them.
    softDelete: column && softDeletes(column, scopes.restore),
  })
  // The last definition of a table is the one others link to, as for the read policy.
  followingSchema.delete(table)
  if (relations === 'foreign-keys') {
    followingSchema.set(table, resource as ResourceDefinition)
    linkRelations()
  }
  return resource
}

function scopesOf(
  name: string,
  scopes: ResourceScopes,
  readScope: string | undefined,
): Record<ResourceOperation, string> {
  const read = scopes.read ?? readScope ?? `${name}:read`
  const write = scopes.write ?? `${name}:write`
  return Object.fromEntries(
    RESOURCE_OPERATIONS.map((op) => [op, scopes[op] ?? (READS.has(op) ? read : write)]),
  ) as Record<ResourceOperation, string>
}

/**
 * Gives each resource that follows the schema the relations its foreign keys make to the
 * others, under the names `foreignKeyRelations` gives them; a name the resource's own
 * `include` holds stays its. Run at each definition, so a model added later is includable
 * from the resources defined before it, with no edit to them.
 */
function linkRelations(): void {
  const tables = [...followingSchema.keys()]
  for (const resource of followingSchema.values()) {
    for (const [name, spec] of Object.entries(foreignKeyRelations(resource.table, tables))) {
      if (!resource.relations.has(name)) {
        resource.relations.set(name, resolveRelation(resource, name, spec))
      }
    }
  }
}
