import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type BetterSqlite3 from 'better-sqlite3'
import { sql } from 'drizzle-orm'
import type pg from 'pg'
import {
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_SLOW_QUERY_WAIT_MS,
  DEFAULT_STATEMENT_TIMEOUT_MS,
  defaultQueryTimeoutMs,
} from '../core/budgets.ts'
import { ConfigError } from '../core/config/parse-env.ts'
import { importOptional, MissingPackageError } from '../core/optional-package.ts'
import { revealSecret, type Secret } from '../core/secret.ts'
import { adoptPgPool, isPgPool } from './adopted-pool.ts'
import { closedOnQueryTimeout } from './bounded-client.ts'
import { type PipelineOptions, pipelineOneOffQueries } from './pipelined-queries.ts'
import { poolerOfUrl, unnamedStatementClient } from './pooler.ts'
import { defaultSlowQueryConcurrency, QueryGate, setPoolBudget } from './query-budget.ts'

// The shapes live in their own module, so that the openers beside this one (adopted-pool.ts)
// name them without importing the module that imports them.
export type {
  CreateDatabaseOptions,
  Database,
  Dialect,
  PostgresDatabase,
  PostgresDb,
  SqliteDatabase,
  SqliteDb,
} from './database-types.ts'

import type {
  CreateDatabaseOptions,
  Database,
  Dialect,
  PostgresDatabase,
  SqliteDatabase,
} from './database-types.ts'

/**
 * Opens the database a URL names:
 * - `postgres://…` / `postgresql://…`: a PostgreSQL server through a pg pool;
 * - `sqlite:<path>`, `file:<path>` (`sqlite::memory:` for tests): SQLite on better-sqlite3;
 * - `pglite:` (in memory) or `pglite:<dir>`: embedded Postgres;
 * - no URL: embedded Postgres in `storage/pgdata`, the zero-setup default of a Postgres app;
 * - the app's own `pg.Pool` (a Drizzle db's `db.$client`): kiln queries through it, so the app
 *   keeps one pool (`adoptPgPool`).
 * @example
 * ```ts
 * const database = await createDatabase(process.env.DATABASE_URL)
 * ```
 */
export async function createDatabase(
  given?: Secret | string | pg.Pool,
  options: CreateDatabaseOptions = {},
): Promise<Database> {
  if (isPgPool(given)) return adoptPgPool(given, options, pools)
  // A postgres:// URL may carry a password: `DATABASE_URL` is a Secret in the app's config.
  const url = given === undefined ? undefined : revealSecret(given)
  if (!url) return openDefaultPglite(options.pgliteDir ?? 'storage/pgdata')
  switch (databaseUrlKind(url)) {
    case 'pglite':
      return openPglite(pgliteDir(url))
    case 'sqlite':
      return openSqlite(sqlitePath(url))
    case 'postgres':
      return openPostgresBehind(url, options)
    default:
      throw new TypeError(`createDatabase: ${DATABASE_URL_FORMS}`)
  }
}

/** What a valid database URL looks like, for error messages. */
export const DATABASE_URL_FORMS =
  'expected postgres://user:password@host:5432/database, sqlite:<path> or file:<path> (sqlite::memory: in memory), or pglite:<dir> (pglite: in memory)'

/** The kind of database a URL names, or undefined when it is not a URL kiln can open. */
export function databaseUrlKind(url: string): 'postgres' | 'pglite' | 'sqlite' | undefined {
  if (url.startsWith('pglite:')) return 'pglite'
  if (url.startsWith('sqlite:') || url.startsWith('file:')) return 'sqlite'
  if (/^postgres(ql)?:\/\//.test(url)) {
    try {
      const parsed = new URL(url)
      return parsed.hostname !== '' || parsed.searchParams.has('host') ? 'postgres' : undefined
    } catch {
      return undefined
    }
  }
  return undefined
}

/** The dialect of the database a URL names. */
export function databaseUrlDialect(url: string): Dialect | undefined {
  const kind = databaseUrlKind(url)
  return kind === undefined ? undefined : kind === 'sqlite' ? 'sqlite' : 'postgres'
}

/** The data folder in a `pglite:` URL, or undefined for an in-memory database. */
export function pgliteDir(url: string): string | undefined {
  const dir = url.slice('pglite:'.length)
  return dir === '' || dir === ':memory:' || dir === 'memory' ? undefined : dir
}

/** The file path (or `:memory:`) in a `sqlite:` or `file:` URL. */
export function sqlitePath(url: string): string {
  let rest = url.replace(/^(sqlite|file):/, '')
  if (rest.startsWith('//')) rest = rest.slice(2)
  const query = rest.indexOf('?')
  if (query >= 0) rest = rest.slice(0, query)
  if (rest === '' || rest === ':memory:' || rest === 'memory') return ':memory:'
  return rest
}

const pools = new WeakMap<Database, pg.Pool>()
const sqliteClients = new WeakMap<Database, BetterSqlite3.Database>()

/** The pg pool under a database opened from a postgres:// URL (for sessions that need one connection). */
export function postgresPool(database: Database): pg.Pool | undefined {
  return pools.get(database)
}

/** The better-sqlite3 connection under a SQLite database. */
export function sqliteClient(database: Database): BetterSqlite3.Database | undefined {
  return sqliteClients.get(database)
}

/**
 * The pg settings of a connection that keeps session state (LISTEN): the server's own; behind
 * a transaction pooler the direct URL's, or undefined without one. Undefined off pg.
 */
export function sessionConnectionConfig(database: Database): pg.ClientConfig | undefined {
  const pool = pools.get(database)
  if (!pool) return undefined
  return directConfigs.has(database)
    ? directConfigs.get(database)
    : (pool.options as pg.ClientConfig)
}

/** Whether the database is reached through a transaction pooler. */
export function behindTransactionPooler(database: Database): boolean {
  return directConfigs.has(database)
}

/** Databases opened behind a transaction pooler → their direct connection's settings, if given. */
const directConfigs = new WeakMap<Database, pg.ClientConfig | undefined>()

async function openPostgresBehind(
  given: string,
  options: CreateDatabaseOptions,
): Promise<PostgresDatabase> {
  const { url, pooler, detected } = poolerOfUrl(given, options.pooler)
  const pooled = pooler === 'transaction'
  const poolMax = options.poolMax ?? 10
  const connections = pooled ? 0 : (options.pipelineConnections ?? 4)
  const statementTimeoutMs = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS
  const queryTimeoutMs = options.queryTimeoutMs ?? defaultQueryTimeoutMs(statementTimeoutMs)
  if (queryTimeoutMs > 0 && statementTimeoutMs > 0 && queryTimeoutMs <= statementTimeoutMs) {
    throw new TypeError(
      `createDatabase: queryTimeoutMs (${queryTimeoutMs}) must be above statementTimeoutMs (${statementTimeoutMs}), or a slow list query is cut off before the server cancels it`,
    )
  }
  const database = await openPostgres(url, {
    max: poolMax,
    pipeline: { connections, stalledAfterMs: options.pipelineStalledAfterMs },
    behindTransactionPooler: pooled,
    connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    queryTimeoutMs,
    statementTimeoutMs,
    slowQueries: {
      concurrency:
        options.slowQueryConcurrency ?? defaultSlowQueryConcurrency(poolMax, connections),
      waitMs: options.slowQueryWaitMs ?? DEFAULT_SLOW_QUERY_WAIT_MS,
    },
  })
  if (!pooled) return database
  const direct = options.directUrl === undefined ? undefined : revealSecret(options.directUrl)
  directConfigs.set(database, direct ? { connectionString: direct } : undefined)
  const logger = options.logger ?? { info: (message: string) => console.info(message) }
  logger.info(
    `kiln: PostgreSQL through a transaction pooler (${detected ? 'recognised by its address' : 'pooler=transaction'}): no named statements, no pipelines${direct ? '; the API-key change feed listens on the direct URL' : '; API keys verified on every request (no direct URL to LISTEN on)'}`,
  )
  return database
}

// Each driver (and drizzle's adapter for it, which imports the driver) is loaded only when a URL
// names it, so an app installs just the one it uses.

interface PostgresSettings {
  max: number
  pipeline: PipelineOptions
  behindTransactionPooler: boolean
  connectTimeoutMs: number
  queryTimeoutMs: number
  statementTimeoutMs: number
  slowQueries: { concurrency: number; waitMs: number }
}

async function openPostgres(url: string, settings: PostgresSettings): Promise<PostgresDatabase> {
  const { max, pipeline, statementTimeoutMs, slowQueries } = settings
  const [{ default: pg }, { drizzle: drizzlePg, NodePgSession, NodePgDatabase }] =
    await importOptional('pg', 'PostgreSQL (a postgres:// URL)', () =>
      Promise.all([import('pg'), import('drizzle-orm/node-postgres')]),
    )
  // Every wait has a budget: a connection (opened, or freed by another request) within
  // connectionTimeoutMillis, each statement's answer within query_timeout.
  const Client = closedOnQueryTimeout(pg.Client)
  const pool = new pg.Pool({
    connectionString: url,
    max,
    connectionTimeoutMillis: settings.connectTimeoutMs,
    ...(settings.queryTimeoutMs > 0 ? { query_timeout: settings.queryTimeoutMs } : {}),
    Client: settings.behindTransactionPooler ? unnamedStatementClient(Client) : Client,
  })
  // An idle client losing its server emits on the pool; the next query reports the failure.
  pool.on('error', () => {})
  try {
    pipelineOneOffQueries(pool, Client, pipeline)
    setPoolBudget(pool, {
      statementTimeoutMs,
      pipelines: !settings.behindTransactionPooler,
      gate: new QueryGate(slowQueries.concurrency, slowQueries.waitMs),
      Session: NodePgSession,
      Database: NodePgDatabase,
    })
  } catch (error) {
    await pool.end()
    throw error
  }
  const db = drizzlePg(pool)
  const database: PostgresDatabase = {
    dialect: 'postgres',
    driver: 'pg',
    db,
    pglite: undefined,
    async ping() {
      await db.execute(sql`select 1`)
    },
    async close() {
      if (!pool.ended) await pool.end()
    },
  }
  pools.set(database, pool)
  return database
}

/**
 * The embedded database a Postgres app gets when `DATABASE_URL` is unset. When it cannot open
 * (the folder is not writable, another process holds it), the message names the setting the
 * developer most likely forgot, not only PGlite's own words.
 */
async function openDefaultPglite(dir: string): Promise<PostgresDatabase> {
  try {
    return await openPglite(dir)
  } catch (error) {
    if (error instanceof MissingPackageError) throw error
    throw new ConfigError(
      {
        DATABASE_URL: `not set, so kiln opened embedded Postgres (PGlite) in ${dir}, which failed (${(error as Error).message}). Set DATABASE_URL to your database (postgres://…, or sqlite:<path> for a SQLite app), or free ${dir} if another process is using it`,
      },
      'Could not open the database',
    )
  }
}

async function openPglite(dir: string | undefined): Promise<PostgresDatabase> {
  const [{ PGlite }, { drizzle: drizzlePglite }] = await importOptional(
    '@electric-sql/pglite',
    'Embedded Postgres (a pglite: URL, or no DATABASE_URL in a Postgres app)',
    () => Promise.all([import('@electric-sql/pglite'), import('drizzle-orm/pglite')]),
  )
  if (dir) mkdirSync(resolve(dir), { recursive: true })
  const client = dir ? new PGlite(resolve(dir)) : new PGlite()
  await client.waitReady
  const db = drizzlePglite(client)
  return {
    dialect: 'postgres',
    driver: 'pglite',
    db,
    pglite: client,
    async ping() {
      await db.execute(sql`select 1`)
    },
    async close() {
      if (!client.closed) await client.close()
    },
  }
}

async function openSqlite(path: string): Promise<SqliteDatabase> {
  const [{ default: BetterSqlite3 }, { drizzle: drizzleSqlite }] = await importOptional(
    'better-sqlite3',
    'SQLite (a sqlite: or file: URL)',
    () => Promise.all([import('better-sqlite3'), import('drizzle-orm/better-sqlite3')]),
  )
  if (path !== ':memory:') mkdirSync(dirname(resolve(path)), { recursive: true })
  const client = new BetterSqlite3(path)
  client.pragma('journal_mode = WAL')
  client.pragma('busy_timeout = 5000')
  client.pragma('foreign_keys = ON')
  const db = drizzleSqlite(client)
  const database: SqliteDatabase = {
    dialect: 'sqlite',
    driver: 'better-sqlite3',
    db,
    async ping() {
      client.prepare('select 1').get()
    },
    async close() {
      if (client.open) client.close()
    },
  }
  sqliteClients.set(database, client)
  return database
}
