import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Dialect } from '../../../db/database.ts'
import { libraryMigrationsDir } from '../../../db/migrate.ts'

/**
 * The app's `api_keys` migration: the same `CREATE TABLE IF NOT EXISTS` statements as kiln's
 * own migration, so running both (kiln's first, as `kilnjs migrate` does) is harmless.
 */
export function apiKeysMigration(dialect: Dialect): string {
  const dir = libraryMigrationsDir(dialect)
  const file = readdirSync(dir).find((name) => /_api_keys\.sql$/.test(name))
  if (!file) throw new Error(`kiln's ${dialect} api_keys migration is missing from ${dir}`)
  return readFileSync(join(dir, file), 'utf8')
}

/**
 * Where the api_keys migration goes in the app's migrations folder: an existing
 * `*_api_keys.sql` if there is one, else the next free number (`0002_api_keys.sql`).
 */
export function apiKeysMigrationPath(migrationsDir: string): string {
  const files = existsSync(migrationsDir) ? readdirSync(migrationsDir) : []
  const existing = files.find((name) => /^\d+_api_keys\.sql$/.test(name))
  if (existing) return join(migrationsDir, existing)
  const numbers = files.map((name) => /^(\d+)_/.exec(name)?.[1]).filter((n) => n !== undefined)
  const next = numbers.reduce((max, n) => Math.max(max, Number(n)), 0) + 1
  return join(migrationsDir, `${String(next).padStart(4, '0')}_api_keys.sql`)
}
