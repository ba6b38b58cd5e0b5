import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { PGlite, Transaction } from '@electric-sql/pglite'
import type BetterSqlite3 from 'better-sqlite3'
import type pg from 'pg'
import {
  behindTransactionPooler,
  type Database,
  type Dialect,
  type PostgresDatabase,
  postgresPool,
  sqliteClient,
} from './database.ts'
import { appliedByDrizzleKit } from './drizzle-kit-journal.ts'

/** Receives what migrate did; a pino logger fits. */
export interface MigrationLogger {
  info(message: string): void
  warn(message: string): void
}

/** Options of `migrate`. */
export interface MigrateOptions {
  /** The app's folder of `.sql` migrations, run after kiln's own. */
  appMigrationsDir?: string
  logger?: MigrationLogger
}

/** What `migrate` did. */
export interface MigrateResult {
  /** The files applied by this run, namespaced: `kiln/0001_api_keys.sql`, `app/0001_init.sql`. */
  applied: string[]
  /**
   * The app's files that `drizzle-kit migrate` had applied, recorded by this run as applied
   * without running them again (`appliedByDrizzleKit`).
   */
  adopted: string[]
}

/** A migration file failed, or the migrations folder is missing. Nothing of the failed file is kept. */
export class MigrationError extends Error {
  readonly file: string | undefined

  constructor(message: string, options: { file?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'MigrationError'
    this.file = options.file
  }
}

/** One migration file, split into its statements. */
export interface MigrationFile {
  /** `kiln/0001_api_keys.sql` or `app/0001_init.sql`. */
  name: string
  checksum: string
  statements: string[]
}

/** drizzle-kit's separator between the statements of one migration file. */
export const STATEMENT_BREAKPOINT = '--> statement-breakpoint'

/** An arbitrary constant key for `pg_advisory_lock`: "kiln" in ASCII. */
const ADVISORY_LOCK_KEY = 0x6b696c6e

const defaultLogger: MigrationLogger = {
  info: () => {},
  warn: (message) => console.warn(message),
}

/**
 * The folder of kiln's own migrations for a dialect. This module lives two levels under the
 * package root both as source (src/db) and compiled (dist/db), next to `migrations/`.
 */
export function libraryMigrationsDir(dialect: Dialect): string {
  const here = dirname(fileURLToPath(import.meta.url))
  return resolve(here, '..', '..', 'migrations', dialect)
}

/** Reads a folder's `.sql` files, sorted by name, split into statements. */
export function readMigrationFiles(dir: string, namespace: string): MigrationFile[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new MigrationError(`Migrations folder not found: ${dir}`)
  }
  return readdirSync(dir)
    .filter((file) => file.endsWith('.sql'))
    .sort()
    .map((file) => {
      const text = readFileSync(join(dir, file), 'utf8').replace(/\r\n/g, '\n')
      return {
        name: `${namespace}/${file}`,
        checksum: createHash('sha256').update(text).digest('hex'),
        statements: text
          .split(STATEMENT_BREAKPOINT)
          .map((statement) => statement.trim())
          .filter((statement) => statement !== ''),
      }
    })
}

/**
 * Applies kiln's migrations, then the app's, each file once and in one transaction, recording
 * them in `kiln_migrations`. Re-running applies only new files. On a PostgreSQL server an
 * advisory lock serializes instances that migrate at the same time: held for the run on the
 * server itself, taken inside each file's transaction behind a transaction pooler (where a
 * lock held between transactions would stay on a server connection the pooler hands on).
 */
export async function migrate(
  database: Database,
  options: MigrateOptions = {},
): Promise<MigrateResult> {
  const logger = options.logger ?? defaultLogger
  const files = readMigrationFiles(libraryMigrationsDir(database.dialect), 'kiln')
  if (options.appMigrationsDir !== undefined) {
    files.push(...readMigrationFiles(resolve(options.appMigrationsDir), 'app'))
  }
  const byDrizzleKit =
    options.appMigrationsDir === undefined
      ? new Set<string>()
      : await appliedByDrizzleKit(database, resolve(options.appMigrationsDir))
  const runner = database.dialect === 'sqlite' ? sqliteRunner(database) : postgresRunner(database)
  return runner(async (session) => {
    await session.ensureTable()
    const recorded = await session.recorded()
    const applied: string[] = []
    const adopted: string[] = []
    for (const file of files) {
      // Already applied by drizzle-kit migrate: recorded as it stands, never run twice.
      if (byDrizzleKit.has(file.name) && !recorded.has(file.name)) {
        if (await session.apply({ ...file, statements: [] })) adopted.push(file.name)
        continue
      }
      const checksum = recorded.get(file.name)
      if (checksum !== undefined) {
        if (checksum !== file.checksum) {
          logger.warn(
            `Migration ${file.name} changed after it was applied; applied migrations are not run again: write a new migration instead`,
          )
        }
        continue
      }
      try {
        if (await session.apply(file)) {
          applied.push(file.name)
          logger.info(`Applied ${file.name}`)
        }
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error)
        throw new MigrationError(`Migration ${file.name} failed: ${reason}`, {
          file: file.name,
          cause: error,
        })
      }
    }
    return { applied, adopted }
  })
}

interface Session {
  ensureTable(): Promise<void>
  /** name → checksum of every applied migration. */
  recorded(): Promise<Map<string, string>>
  /** Applies a file and records it; false when another run recorded it first. */
  apply(file: MigrationFile): Promise<boolean>
}

type Runner = <T>(work: (session: Session) => Promise<T>) => Promise<T>

const CREATE_TABLE_POSTGRES = `CREATE TABLE IF NOT EXISTS "kiln_migrations" (
  "name" text PRIMARY KEY,
  "checksum" text NOT NULL,
  "applied_at" timestamp with time zone DEFAULT now() NOT NULL
)`

const CREATE_TABLE_SQLITE = `CREATE TABLE IF NOT EXISTS \`kiln_migrations\` (
  \`name\` text PRIMARY KEY NOT NULL,
  \`checksum\` text NOT NULL,
  \`applied_at\` integer NOT NULL
)`

function toMap(rows: { name: string; checksum: string }[]): Map<string, string> {
  return new Map(rows.map((row) => [row.name, row.checksum]))
}

function sqliteRunner(database: Database): Runner {
  const client = sqliteClient(database)
  if (!client) throw new TypeError('migrate: the SQLite database was not opened by createDatabase')
  return (work) => work(sqliteSession(client))
}

function sqliteSession(client: BetterSqlite3.Database): Session {
  const isRecorded = (name: string) =>
    client.prepare('SELECT 1 FROM kiln_migrations WHERE name = ?').get(name) !== undefined
  return {
    async ensureTable() {
      client.exec(CREATE_TABLE_SQLITE)
    },
    async recorded() {
      return toMap(
        client.prepare('SELECT name, checksum FROM kiln_migrations').all() as {
          name: string
          checksum: string
        }[],
      )
    },
    async apply(file) {
      // IMMEDIATE takes the write lock first, so a second process re-checks after us.
      const run = client.transaction(() => {
        if (isRecorded(file.name)) return false
        for (const statement of file.statements) client.exec(statement)
        client
          .prepare('INSERT INTO kiln_migrations (name, checksum, applied_at) VALUES (?, ?, ?)')
          .run(file.name, file.checksum, Date.now())
        return true
      })
      return run.immediate()
    },
  }
}

function postgresRunner(database: PostgresDatabase): Runner {
  if (database.driver === 'pglite') {
    const client = database.pglite
    if (!client) throw new TypeError('migrate: the PGlite database has no client')
    return (work) => work(pgliteSession(client))
  }
  const pool = postgresPool(database)
  if (!pool) throw new TypeError('migrate: the Postgres database was not opened by createDatabase')
  if (behindTransactionPooler(database)) {
    return async (work) => {
      const client = await pool.connect()
      try {
        return await work(pgSession(client, { lockEachTransaction: true }))
      } finally {
        client.release()
      }
    }
  }
  return async (work) => {
    const client = await pool.connect()
    try {
      await client.query('SELECT pg_advisory_lock($1)', [ADVISORY_LOCK_KEY])
      try {
        return await work(pgSession(client, { lockEachTransaction: false }))
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [ADVISORY_LOCK_KEY])
      }
    } finally {
      client.release()
    }
  }
}

function pgSession(
  client: pg.PoolClient,
  { lockEachTransaction }: { lockEachTransaction: boolean },
): Session {
  const begin = async () => {
    await client.query('BEGIN')
    if (!lockEachTransaction) return
    try {
      await client.query('SELECT pg_advisory_xact_lock($1)', [ADVISORY_LOCK_KEY])
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      throw error
    }
  }
  return {
    async ensureTable() {
      if (!lockEachTransaction) {
        await client.query(CREATE_TABLE_POSTGRES)
        return
      }
      await begin()
      try {
        await client.query(CREATE_TABLE_POSTGRES)
        await client.query('COMMIT')
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {})
        throw error
      }
    },
    async recorded() {
      const result = await client.query<{ name: string; checksum: string }>(
        'SELECT name, checksum FROM kiln_migrations',
      )
      return toMap(result.rows)
    },
    async apply(file) {
      await begin()
      try {
        const found = await client.query('SELECT 1 FROM kiln_migrations WHERE name = $1', [
          file.name,
        ])
        if (found.rowCount) {
          await client.query('ROLLBACK')
          return false
        }
        // Without parameters pg uses the simple protocol: a statement may hold several commands.
        for (const statement of file.statements) await client.query(statement)
        await client.query('INSERT INTO kiln_migrations (name, checksum) VALUES ($1, $2)', [
          file.name,
          file.checksum,
        ])
        await client.query('COMMIT')
        return true
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {})
        throw error
      }
    },
  }
}

function pgliteSession(client: PGlite): Session {
  return {
    async ensureTable() {
      await client.exec(CREATE_TABLE_POSTGRES)
    },
    async recorded() {
      const result = await client.query<{ name: string; checksum: string }>(
        'SELECT name, checksum FROM kiln_migrations',
      )
      return toMap(result.rows)
    },
    async apply(file) {
      // PGlite runs one transaction at a time, so the check inside it cannot race.
      return client.transaction(async (tx: Transaction) => {
        const found = await tx.query('SELECT 1 FROM kiln_migrations WHERE name = $1', [file.name])
        if (found.rows.length > 0) return false
        for (const statement of file.statements) await tx.exec(statement)
        await tx.query('INSERT INTO kiln_migrations (name, checksum) VALUES ($1, $2)', [
          file.name,
          file.checksum,
        ])
        return true
      })
    },
  }
}
