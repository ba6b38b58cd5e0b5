import { sql } from 'drizzle-orm'
import type pg from 'pg'
import { DEFAULT_SLOW_QUERY_WAIT_MS, DEFAULT_STATEMENT_TIMEOUT_MS } from '../core/budgets.ts'
import { importOptional } from '../core/optional-package.ts'
import type { CreateDatabaseOptions, Database, PostgresDatabase } from './database-types.ts'
import { defaultSlowQueryConcurrency, QueryGate, setPoolBudget } from './query-budget.ts'

/** Whether `createDatabase` was handed a pg pool rather than a URL. */
export function isPgPool(given: unknown): given is pg.Pool {
  return (
    typeof given === 'object' &&
    given !== null &&
    typeof (given as pg.Pool).connect === 'function' &&
    typeof (given as pg.Pool).totalCount === 'number'
  )
}

/**
 * A database over the app's own pg pool, so an app with its Drizzle client keeps one pool, not
 * two. kiln's queries run through it under the query budget (statement timeout, slow-query
 * gate); kiln leaves the pool itself alone: no pipelined connections beside it, its settings
 * as the app made them, and `close()` does not end it (the app owns it and ends it).
 */
export async function adoptPgPool(
  pool: pg.Pool,
  options: CreateDatabaseOptions,
  pools: WeakMap<Database, pg.Pool>,
): Promise<PostgresDatabase> {
  const { drizzle, NodePgSession, NodePgDatabase } = await importOptional(
    'drizzle-orm',
    'PostgreSQL through the app pool',
    () => import('drizzle-orm/node-postgres'),
  )
  const poolMax = pool.options.max ?? 10
  setPoolBudget(pool, {
    statementTimeoutMs: options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
    // The app's pool may stand behind a transaction pooler: one statement at a time.
    pipelines: false,
    gate: new QueryGate(
      options.slowQueryConcurrency ?? defaultSlowQueryConcurrency(poolMax, 0),
      options.slowQueryWaitMs ?? DEFAULT_SLOW_QUERY_WAIT_MS,
    ),
    Session: NodePgSession,
    Database: NodePgDatabase,
  })
  const db = drizzle(pool)
  const database: PostgresDatabase = {
    dialect: 'postgres',
    driver: 'pg',
    db,
    pglite: undefined,
    async ping() {
      await db.execute(sql`select 1`)
    },
    async close() {},
  }
  pools.set(database, pool)
  return database
}
