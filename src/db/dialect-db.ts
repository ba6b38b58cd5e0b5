import type { Database, PostgresDb, SqliteDb } from './database.ts'

/**
 * The Drizzle instance of a Postgres `Database` (PostgreSQL or PGlite), as `createDatabase()`
 * returns it. Generated Postgres APIs take a `Database` and narrow it here, so the app passes
 * what it opened without a cast; a SQLite database is a TypeError at start-up.
 */
export function postgresDb(database: Database): PostgresDb {
  if (database?.dialect !== 'postgres') throw dialectMismatch('postgres', database)
  return database.db
}

/** The Drizzle instance of a SQLite `Database`; a Postgres one is a TypeError at start-up. */
export function sqliteDb(database: Database): SqliteDb {
  if (database?.dialect !== 'sqlite') throw dialectMismatch('sqlite', database)
  return database.db
}

function dialectMismatch(expected: string, database: Database | undefined): TypeError {
  const got = database?.dialect ?? String(database)
  return new TypeError(
    `This API was generated for a ${expected} database, but the database given is ${got}: open it with a ${expected} DATABASE_URL`,
  )
}
