import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import BetterSqlite3 from 'better-sqlite3'
import { sql } from 'drizzle-orm'
import { type BetterSQLite3Database, drizzle as drizzleSqlite } from 'drizzle-orm/better-sqlite3'
import { drizzle as drizzlePg, type NodePgDatabase } from 'drizzle-orm/node-postgres'
import { drizzle as drizzlePglite, type PgliteDatabase } from 'drizzle-orm/pglite'
import pg from 'pg'

export type Dialect = 'postgres' | 'sqlite'

export type PostgresDb = NodePgDatabase | PgliteDatabase
export type SqliteDb = BetterSQLite3Database

interface DatabaseBase {
  /** Checks that the database answers; throws otherwise. */
  ping(): Promise<void>
  close(): Promise<void>
}

export interface PostgresDatabase extends DatabaseBase {
  dialect: 'postgres'
  driver: 'pg' | 'pglite'
  db: PostgresDb
  /** The PGlite instance when embedded (to share it on a socket), else undefined. */
  pglite: PGlite | undefined
}

export interface SqliteDatabase extends DatabaseBase {
  dialect: 'sqlite'
  driver: 'better-sqlite3'
  db: SqliteDb
}

export type Database = PostgresDatabase | SqliteDatabase

export interface CreateDatabaseOptions {
  /** Where embedded PGlite keeps its data when no URL is given. */
  pgliteDir?: string
  /** Connections in the pg pool. */
  poolMax?: number
}

/**
 * Opens the database a URL names:
 * - `postgres://…` / `postgresql://…`: a PostgreSQL server through a pg pool;
 * - `sqlite:<path>`, `file:<path>` (`sqlite::memory:` for tests): SQLite on better-sqlite3;
 * - `pglite:` (in memory) or `pglite:<dir>`: embedded Postgres;
 * - no URL: embedded Postgres in `storage/pgdata`, the zero-setup default of a Postgres app.
 */
export async function createDatabase(
  url?: string,
  options: CreateDatabaseOptions = {},
): Promise<Database> {
  if (!url) return openPglite(options.pgliteDir ?? 'storage/pgdata')
  if (url.startsWith('pglite:')) {
    const dir = url.slice('pglite:'.length)
    return openPglite(dir === '' || dir === ':memory:' ? undefined : dir)
  }
  if (url.startsWith('sqlite:') || url.startsWith('file:')) return openSqlite(sqlitePath(url))
  if (/^postgres(ql)?:\/\//.test(url)) return openPostgres(url, options.poolMax ?? 10)
  throw new TypeError(
    'createDatabase: expected a postgres://, sqlite:, file: or pglite: URL (or none for embedded Postgres)',
  )
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

async function openPostgres(url: string, max: number): Promise<PostgresDatabase> {
  const pool = new pg.Pool({ connectionString: url, max, connectionTimeoutMillis: 5_000 })
  // An idle client losing its server emits on the pool; the next query reports the failure.
  pool.on('error', () => {})
  const db = drizzlePg(pool)
  return {
    dialect: 'postgres',
    driver: 'pg',
    db,
    pglite: undefined,
    async ping() {
      await db.execute(sql`select 1`)
    },
    async close() {
      await pool.end()
    },
  }
}

async function openPglite(dir: string | undefined): Promise<PostgresDatabase> {
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

function openSqlite(path: string): SqliteDatabase {
  if (path !== ':memory:') mkdirSync(dirname(resolve(path)), { recursive: true })
  const client = new BetterSqlite3(path)
  client.pragma('journal_mode = WAL')
  client.pragma('busy_timeout = 5000')
  client.pragma('foreign_keys = ON')
  const db = drizzleSqlite(client)
  return {
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
}
