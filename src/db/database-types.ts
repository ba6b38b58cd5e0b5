import type { PGlite } from '@electric-sql/pglite'
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3'
import type { NodePgDatabase } from 'drizzle-orm/node-postgres'
import type { PgliteDatabase } from 'drizzle-orm/pglite'
import type { Secret } from '../core/secret.ts'
import type { PoolerMode } from './pooler.ts'

/** The SQL dialect of a database and of an app's tables. */
export type Dialect = 'postgres' | 'sqlite'

/** The Drizzle database of a `PostgresDatabase`. */
export type PostgresDb = NodePgDatabase | PgliteDatabase
/** The Drizzle database of a `SqliteDatabase`. */
export type SqliteDb = BetterSQLite3Database

interface DatabaseBase {
  /** Checks that the database answers; throws otherwise. */
  ping(): Promise<void>
  close(): Promise<void>
}

/** A PostgreSQL database (node-postgres or embedded PGlite) opened by `createDatabase`. */
export interface PostgresDatabase extends DatabaseBase {
  dialect: 'postgres'
  driver: 'pg' | 'pglite'
  db: PostgresDb
  /** The PGlite instance when embedded (to share it on a socket), else undefined. */
  pglite: PGlite | undefined
}

/** A SQLite database (better-sqlite3) opened by `createDatabase`. */
export interface SqliteDatabase extends DatabaseBase {
  dialect: 'sqlite'
  driver: 'better-sqlite3'
  db: SqliteDb
}

/** A database opened by `createDatabase`: PostgreSQL (or PGlite) or SQLite. */
export type Database = PostgresDatabase | SqliteDatabase

/** Options of `createDatabase`. */
export interface CreateDatabaseOptions {
  /** Where embedded PGlite keeps its data when no URL is given. */
  pgliteDir?: string | undefined
  /** Connections in the pg pool. */
  poolMax?: number | undefined
  /**
   * PostgreSQL connections that one-off queries are pipelined over (default 4), beside the
   * pool, which keeps transactions and sessions; 0 sends every query on a pooled connection of
   * its own. See `pipelineOneOffQueries` and docs/database.md.
   */
  pipelineConnections?: number | undefined
  /**
   * A pipelined connection whose oldest unanswered query is older than this takes no more
   * queries (default 25 ms): what may wait behind a slow query. Raise it for fewer pooled
   * checkouts when slow queries are rare, lower it when they are common.
   */
  pipelineStalledAfterMs?: number | undefined
  /**
   * What stands between kiln and PostgreSQL (docs/database.md, "Behind a connection pooler"). Behind
   * `'transaction'` (PgBouncer's transaction mode, a hosted pooler's transaction port) kiln
   * sends no named statements and no pipelines. Default: the URL's `?pooler=`, else
   * `'transaction'` for the hosted poolers kiln recognises by address, else `'none'`.
   */
  pooler?: PoolerMode | undefined
  /**
   * The server's own address when `DATABASE_URL` is a transaction pooler (`DATABASE_DIRECT_URL`):
   * the API-key change feed LISTENs there. Without it, behind such a pooler, API keys are
   * verified against the database on every request.
   */
  directUrl?: Secret | string | undefined
  /**
   * How long a request waits for a pooled PostgreSQL connection, to open one or for one to be
   * free, before it fails and answers 503 (default 5000 ms; the app config's
   * `DATABASE_CONNECT_TIMEOUT_MS`).
   */
  connectTimeoutMs?: number | undefined
  /**
   * How long a statement waits for its answer on an open connection (default: `statementTimeoutMs`
   * plus 2000 ms, 7000 ms by default; 0: no limit; the app config's `DATABASE_QUERY_TIMEOUT_MS`).
   * Past it the connection is closed, so a server or pooler that stops answering without
   * closing its connections holds nothing, and the request answers 503. It must be above
   * `statementTimeoutMs`, which the server enforces and reports with the query's shape.
   */
  queryTimeoutMs?: number | undefined
  /**
   * How long a list or search query may run on PostgreSQL before the server cancels it and the
   * request answers 503 (default 5000 ms; 0: no limit; the app config's
   * `DATABASE_STATEMENT_TIMEOUT_MS`). Such queries run on a pooled connection, never a
   * pipelined one, and are cancelled when the client hangs up. PGlite and SQLite cannot stop a
   * running statement: there it does nothing. See docs/database.md, "The query budget".
   */
  statementTimeoutMs?: number | undefined
  /**
   * How many of those budgeted queries (the list pages that may be slow, the counts, the
   * aggregates) run at once on PostgreSQL; the others wait their turn. Default: what the pool
   * holds beside the pipelined connections, `poolMax - pipelineConnections` (6 of the default
   * 10 and 4), at least 1, so that the slow queries and the pipes together ask no more of
   * PostgreSQL than the pool alone would. See docs/database.md, "The query budget".
   */
  slowQueryConcurrency?: number | undefined
  /**
   * How long a budgeted query waits for its turn before the request answers 503 (default
   * 5000 ms; 0: answer 503 at once when every turn is taken). A waiting query whose client
   * hangs up leaves the queue.
   */
  slowQueryWaitMs?: number | undefined
  /** Told once, at start-up, that kiln runs behind a transaction pooler. Default: console. */
  logger?: { info(message: string): void } | undefined
}
