import type { Context } from 'hono'
import { clientAddress, type TrustProxy } from '../../core/http/client-ip.ts'
import type { PostgresDb, SqliteDb } from '../../db/database.ts'
import type { ApiEnv } from '../auth/api-key-auth.ts'
import type { QueryCaller } from '../query/definition.ts'
import type { Realtime } from '../realtime/index.ts'
import type { RecordCounter } from '../rest/record-counter.ts'

/** One call of an operation: the request, who makes it (its API key) and the record's `{id}`. */
export interface ResourceCall {
  request: Request
  caller: QueryCaller | undefined
  /** The `{id}` of the path, as given (the operation reads it by the primary key's type). */
  id?: string | undefined
  /** The client's address under a proxy trust: what limits its event streams. */
  client?: ((trustProxy: TrustProxy) => string) | undefined
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

/**
 * What the operations of every resource share: the database, the list totals' cache and the
 * realtime core (each committed write is published to it; `events` streams from it).
 */
export interface ResourceContext {
  db: PostgresDb | SqliteDb
  counts: RecordCounter
  realtime?: Realtime | undefined
}

/** The call a Hono handler makes: its request, its API key, its `{id}` and its client. */
export function resourceCall(c: Context<ApiEnv>): ResourceCall {
  const client = (trustProxy: TrustProxy) => clientAddress(c, trustProxy)
  return { request: c.req.raw, caller: c.get('apiKey'), id: c.req.param('id'), client }
}
