import type { Context } from 'hono'
import type { PostgresDb, SqliteDb } from '../../db/database.ts'
import type { ApiEnv } from '../auth/api-key-auth.ts'
import type { QueryCaller } from '../query/definition.ts'
import type { RecordCounter } from '../rest/record-counter.ts'

/** One call of an operation: the request, who makes it (its API key) and the record's `{id}`. */
export interface ResourceCall {
  request: Request
  caller: QueryCaller | undefined
  /** The `{id}` of the path, as given (the operation reads it by the primary key's type). */
  id?: string | undefined
}

/**
 * One call of create, update or delete from a surface that read its arguments itself (the MCP
 * tools): `input` holds the values to write, already checked there under the resource's rules,
 * so no body is read; without a request, no `If-Match` is compared.
 */
export interface WriteCall extends Omit<ResourceCall, 'request'> {
  request?: Request | undefined
  input?: object | undefined
}

/** What the operations of every resource share: the database and the list totals' cache. */
export interface ResourceContext {
  db: PostgresDb | SqliteDb
  counts: RecordCounter
}

/** The call a Hono handler makes: its request, its API key and its `{id}`. */
export function resourceCall(c: Context<ApiEnv>): ResourceCall {
  return { request: c.req.raw, caller: c.get('apiKey'), id: c.req.param('id') }
}
