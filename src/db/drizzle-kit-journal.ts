import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import type { Database } from './database.ts'

/** drizzle-kit's record of a folder's migrations, `<folder>/meta/_journal.json`. */
interface DrizzleJournal {
  entries: Array<{ tag: string; when: number }>
}

/**
 * The app's migrations (`app/<tag>.sql`) that `drizzle-kit migrate` already applied to this
 * database. drizzle-kit records each run in `drizzle.__drizzle_migrations` (`__drizzle_migrations`
 * on SQLite) as the file's hash and its journal time, and applies only the journal's migrations
 * newer than the latest recorded time: those at or before it, or whose hash is recorded, are
 * applied. Empty when the folder has no journal or drizzle-kit never migrated this database.
 */
export async function appliedByDrizzleKit(database: Database, dir: string): Promise<Set<string>> {
  const journalPath = join(dir, 'meta', '_journal.json')
  if (!existsSync(journalPath)) return new Set()
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as DrizzleJournal
  const rows = await drizzleKitRecords(database)
  if (rows.length === 0) return new Set()
  const latest = Math.max(...rows.map((row) => Number(row.created_at)))
  const hashes = new Set(rows.map((row) => row.hash))
  const applied = journal.entries.filter(
    (entry) => entry.when <= latest || hashes.has(fileHash(join(dir, `${entry.tag}.sql`)) ?? ''),
  )
  return new Set(applied.map((entry) => `app/${entry.tag}.sql`))
}

interface DrizzleKitRecord {
  hash: string
  created_at: string | number
}

async function drizzleKitRecords(database: Database): Promise<DrizzleKitRecord[]> {
  if (database.dialect === 'sqlite') {
    const table = database.db.all<{ name: string }>(
      sql`select name from sqlite_master where type = 'table' and name = '__drizzle_migrations'`,
    )
    if (table.length === 0) return []
    return database.db.all<DrizzleKitRecord>(sql`select hash, created_at from __drizzle_migrations`)
  }
  const present = await database.db.execute<{ present: boolean }>(
    sql`select to_regclass('drizzle.__drizzle_migrations') is not null as present`,
  )
  if (!present.rows[0]?.present) return []
  const result = await database.db.execute<DrizzleKitRecord & Record<string, unknown>>(
    sql`select hash, created_at from drizzle.__drizzle_migrations`,
  )
  return result.rows
}

/** The hash drizzle-kit records: sha256 of the file as it reads it. */
function fileHash(path: string): string | undefined {
  if (!existsSync(path)) return undefined
  return createHash('sha256').update(readFileSync(path).toString()).digest('hex')
}
