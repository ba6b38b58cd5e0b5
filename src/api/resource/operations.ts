import type { MiddlewareHandler } from 'hono'
import type { z } from 'zod'
import { MethodNotAllowedError } from '../../core/errors.ts'
import type { ApiEnv } from '../auth/api-key-auth.ts'
import { scopeGuard } from '../auth/scope-guard.ts'
import type { AggregateEnvelope } from '../query/aggregate.ts'
import type { ListEnvelope } from '../query/run.ts'
import type { ResourceCall, ResourceContext, WriteCall } from './call.ts'
import { RESOURCE_OPERATIONS, type ResourceDefinition, type ResourceOperation } from './define.ts'
import { eventsOperation } from './events.ts'
import { readOperations } from './reads.ts'
import { type RecordLookup, recordLookup } from './records.ts'
import { writeOperations } from './writes.ts'

/** The input of a create or an update, as its request schema gives it. */
export type WriteInput<R> =
  R extends ResourceDefinition<infer _Row, infer _Rec, infer C, infer U>
    ? z.output<C> | z.output<U>
    : never

/**
 * Options of `resourceOperations`: the database, the totals' cache, the realtime core, the
 * app's step in writes.
 */
export interface ResourceOperationsOptions<R> extends ResourceContext {
  /**
   * Turns each valid input of create, update and the bulk update into the values written: a
   * password hashed by the login's own hasher, a value computed from others. Timestamps are
   * kiln's (`updated_at` on every update). Runs once every item of a request passed.
   */
  prepare?: (input: WriteInput<R>) => object | Promise<object>
}

type Answer<R> = R extends ResourceDefinition<infer _Row, infer Rec> ? Rec : never

/** Each operation of a resource, as `resourceOperations` gives it. */
export interface ResourceOperations<R extends ResourceDefinition> {
  /** The scope guard of each operation, from the definition's `scopes` (OpenAPI reads it). */
  scope: Readonly<Record<ResourceOperation, MiddlewareHandler<ApiEnv>>>
  index(call: ResourceCall): Promise<ListEnvelope>
  aggregate(call: ResourceCall): Promise<AggregateEnvelope>
  /** `GET /events`: a `text/event-stream` of the resource's changes (404 without `realtime`). */
  events(call: ResourceCall): Promise<Response>
  show(call: ResourceCall): Promise<{ data: Partial<Answer<R>> }>
  store(call: WriteCall): Promise<{ data: Answer<R> | Answer<R>[] }>
  update(call: WriteCall): Promise<{ data: Answer<R> }>
  destroy(call: WriteCall): Promise<{ message: string }>
  updateMany(call: ResourceCall): Promise<{ data: Answer<R>[] }>
  destroyMany(call: ResourceCall): Promise<{ message: string; count: number }>
  restore(call: ResourceCall): Promise<{ data: Answer<R> }>
}

/**
 * The operations of a resource, each implemented once here and reading every declaration of
 * the definition that applies to it: scopes, fields, the row filter, soft delete, `If-Match`,
 * constraint violations, the list totals' cache. A generated controller's handlers are calls
 * to them; an app replaces any handler with its own code, and the others receive kiln's fixes
 * when kiln is upgraded. An operation the definition does not offer answers 405.
 * @example
 * ```ts
 * const posts = resourceOperations(postsResource, { db, counts })
 * app.get('/', posts.scope.index, async (c) => c.json(await posts.index(resourceCall(c))))
 * ```
 */
export function resourceOperations<R extends ResourceDefinition>(
  resource: R,
  { prepare: step, ...context }: ResourceOperationsOptions<R>,
): ResourceOperations<R> {
  const lookup = recordLookup(resource, context.db)
  const prepare = step as ((input: object) => object | Promise<object>) | undefined
  const all = {
    ...readOperations(resource, context, lookup),
    ...eventsOperation(resource, context, lookup),
    ...writeOperations(resource, context, lookup, prepare),
  }
  const offered = Object.fromEntries(
    RESOURCE_OPERATIONS.map((op) => [op, resource.operations.has(op) ? all[op] : notOffered]),
  )
  const scope = Object.fromEntries(
    RESOURCE_OPERATIONS.map((op) => [op, scopeGuard(resource.scopes[op])]),
  )
  return { ...offered, scope } as unknown as ResourceOperations<R>
}

/**
 * store, update and destroy of a definition, as `resourceOperations` gives them, for a surface
 * that guards its own calls and reads its own arguments (the MCP tools, through `WriteCall`):
 * its writes are REST's, statement for statement.
 */
export function resourceWrites(resource: ResourceDefinition, context: ResourceContext) {
  // A table without a single-column key still takes creates (a join table's rows).
  const lookup = resource.primaryKey ? recordLookup(resource, context.db) : keyless(resource)
  const { store, update, destroy } = writeOperations(resource, context, lookup, undefined)
  return { store, update, destroy }
}

function keyless(resource: ResourceDefinition): RecordLookup {
  const refuse = (): never => {
    throw new TypeError(`${resource.tableName}: update and delete need a single-column primary key`)
  }
  return { key: undefined as never, readId: refuse, byId: refuse, find: refuse }
}

async function notOffered(): Promise<never> {
  throw new MethodNotAllowedError([])
}
