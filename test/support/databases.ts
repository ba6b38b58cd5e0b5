import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { describe } from 'vitest'
import { createDatabase, type Database } from '../../src/db/index.ts'
import { pgbouncerUrl, postgresUrl } from './env.ts'

export type DatabaseBackendName = 'sqlite' | 'pglite' | 'postgres' | 'pgbouncer'

export interface TestDatabase {
  database: Database
  /** A URL another process (a CLI, a second instance) can open; undefined for in-memory ones. */
  url: string | undefined
  /** The server's own URL when `url` is a pooler's (`DATABASE_DIRECT_URL`). */
  directUrl?: string
  cleanup(): Promise<void>
}

export interface DatabaseBackend {
  name: DatabaseBackendName
  dialect: 'postgres' | 'sqlite'
  available: boolean
  /** A fresh, empty database of this backend, dropped by `cleanup`. */
  create(): Promise<TestDatabase>
}

/**
 * The URL of `database` (a URL on the test server) through the test PgBouncer, in transaction
 * mode: `?pooler=transaction` tells kiln so.
 */
export function throughPgBouncer(database: string): string {
  if (!pgbouncerUrl) throw new Error('KILN_TEST_PGBOUNCER_URL is not set')
  const url = new URL(pgbouncerUrl)
  url.pathname = new URL(database).pathname
  url.searchParams.set('pooler', 'transaction')
  return url.toString()
}

/** A new database on the test PostgreSQL server, so parallel test files never share tables. */
export async function createPostgresTestDatabase(): Promise<{
  url: string
  drop(): Promise<void>
}> {
  if (!postgresUrl) throw new Error('KILN_TEST_DATABASE_URL is not set')
  const name = `kiln_t_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: postgresUrl })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE "${name}"`)
  } finally {
    await admin.end()
  }
  const url = new URL(postgresUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: postgresUrl })
      await client.connect()
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
      } finally {
        await client.end()
      }
    },
  }
}

export const databaseBackends: DatabaseBackend[] = [
  {
    name: 'sqlite',
    dialect: 'sqlite',
    available: true,
    async create() {
      const database = await createDatabase('sqlite::memory:')
      return { database, url: undefined, cleanup: () => database.close() }
    },
  },
  {
    name: 'pglite',
    dialect: 'postgres',
    available: true,
    async create() {
      const database = await createDatabase('pglite:')
      return { database, url: undefined, cleanup: () => database.close() }
    },
  },
  {
    name: 'postgres',
    dialect: 'postgres',
    available: postgresUrl !== undefined,
    async create() {
      const { url, drop } = await createPostgresTestDatabase()
      const database = await createDatabase(url, { poolMax: 5 })
      return {
        database,
        url,
        async cleanup() {
          await database.close()
          await drop()
        },
      }
    },
  },
  {
    // The same server through PgBouncer in transaction mode (`.ci/run` starts it): each
    // transaction may run on another server connection.
    name: 'pgbouncer',
    dialect: 'postgres',
    available: postgresUrl !== undefined && pgbouncerUrl !== undefined,
    async create() {
      const { url: directUrl, drop } = await createPostgresTestDatabase()
      const url = throughPgBouncer(directUrl)
      const database = await createDatabase(url, {
        poolMax: 5,
        directUrl,
        logger: { info: () => {} },
      })
      return {
        database,
        url,
        directUrl,
        async cleanup() {
          await database.close()
          await drop()
        },
      }
    },
  },
]

/**
 * Runs the same suite once per database backend (`only: ['postgres']` includes the server
 * through PgBouncer). A backend whose service is not configured
 * is skipped (global setup says so in one line, and fails the run under CI=true).
 */
export function describeEachDatabase(
  title: string,
  suite: (backend: DatabaseBackend) => void,
  options: { only?: DatabaseBackendName[] } = {},
): void {
  // A suite for the PostgreSQL server runs through the pooler in front of it too.
  const only = options.only?.includes('postgres') ? [...options.only, 'pgbouncer'] : options.only
  for (const backend of databaseBackends) {
    if (only && !only.includes(backend.name)) continue
    describe.skipIf(!backend.available)(`${title} [${backend.name}]`, () => suite(backend))
  }
}
