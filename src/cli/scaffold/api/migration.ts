import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
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

/** drizzle-kit's record of its migrations, `<out>/meta/_journal.json`. */
interface DrizzleJournal {
  version: string
  dialect: string
  entries: Array<{ idx: number; version: string; when: number; tag: string; breakpoints: boolean }>
}

export interface ApiKeysMigrationPlan {
  /** Where the migration goes: an existing `*_api_keys.sql`, or the next free number. */
  path: string
  /**
   * drizzle-kit's journal with the migration recorded, when the folder is drizzle-kit's and the
   * migration is new: drizzle-kit numbers its next migration after the journal's last entry,
   * so a file it does not know of would share a number with its next one. Recorded, it is what
   * `drizzle-kit generate --custom` writes: a migration of the journal without a snapshot.
   */
  journal?: { path: string; contents: string; exists: boolean }
}

const DRIZZLE_CONFIGS = [
  'drizzle.config.ts',
  'drizzle.config.mts',
  'drizzle.config.js',
  'drizzle.config.mjs',
  'drizzle.config.json',
]

/**
 * The folder the app's drizzle config writes migrations into (its `out`, drizzle-kit's default
 * `drizzle` when it names none), or undefined when the app has no drizzle config.
 */
export function drizzleKitOut(root: string): string | undefined {
  const config = DRIZZLE_CONFIGS.map((name) => join(root, name)).find(existsSync)
  if (!config) return undefined
  const out = /\bout["']?:\s*['"]([^'"]+)['"]/.exec(readFileSync(config, 'utf8'))?.[1]
  return resolve(root, out ?? 'drizzle')
}

/**
 * Whether drizzle-kit writes into `migrationsDir`: its journal is there, or the app's drizzle
 * config names the folder as its `out` (before drizzle-kit's first `generate`).
 */
export function isDrizzleKitFolder(root: string, migrationsDir: string): boolean {
  if (existsSync(join(migrationsDir, 'meta', '_journal.json'))) return true
  return drizzleKitOut(root) === resolve(migrationsDir)
}

/**
 * The folder `make:api` writes the api_keys migration into: the one given or kiln.config.ts's
 * `migrations`; else, in an app that applies its migrations with `drizzle-kit migrate` (the
 * setup that leaves `migrations` out), drizzle-kit's own folder, recorded in its journal so that
 * drizzle-kit applies it with the app's. Undefined without either: `kilnjs migrate` creates
 * api_keys with kiln's own tables, and no app folder needs a copy.
 */
export function apiKeysMigrationDir(
  root: string,
  configured: string | undefined,
): string | undefined {
  return configured === undefined ? drizzleKitOut(root) : resolve(root, configured)
}

/**
 * Where the api_keys migration goes in the app's migrations folder: an existing
 * `*_api_keys.sql`, or a new one (`planNewMigration`).
 */
export function planApiKeysMigration(
  migrationsDir: string,
  options: NewMigrationOptions,
): ApiKeysMigrationPlan {
  const files = existsSync(migrationsDir) ? readdirSync(migrationsDir) : []
  const existing = files.find((name) => /^\d+_api_keys\.sql$/.test(name))
  if (existing) return { path: join(migrationsDir, existing) }
  return planNewMigration(migrationsDir, 'api_keys', options)
}

export interface NewMigrationOptions {
  dialect: Dialect
  drizzleKit: boolean
  now: number
}

/**
 * A new migration in the app's migrations folder, numbered after every file there and every
 * migration of drizzle-kit's journal (`0002_api_keys.sql`), and the journal that records it
 * when drizzle-kit shares the folder.
 */
export function planNewMigration(
  migrationsDir: string,
  name: string,
  options: NewMigrationOptions,
): ApiKeysMigrationPlan {
  const files = existsSync(migrationsDir) ? readdirSync(migrationsDir) : []
  const journalPath = join(migrationsDir, 'meta', '_journal.json')
  const journal = options.drizzleKit ? readJournal(journalPath, options.dialect) : undefined
  const used = [
    ...files.map((file) => /^(\d+)_/.exec(file)?.[1]).filter((n) => n !== undefined),
    ...(journal?.entries.map((entry) => entry.idx) ?? []),
  ].map(Number)
  // drizzle-kit counts from 0000, the folders kiln sets up from 0001.
  const next = used.length > 0 ? Math.max(...used) + 1 : journal ? 0 : 1
  const tag = `${String(next).padStart(4, '0')}_${name}`
  const path = join(migrationsDir, `${tag}.sql`)
  if (!journal) return { path }
  journal.entries.push({
    idx: next,
    version: journal.entries.at(-1)?.version ?? journal.version,
    when: options.now,
    tag,
    breakpoints: true,
  })
  return {
    path,
    journal: {
      path: journalPath,
      contents: `${JSON.stringify(journal, null, 2)}`,
      exists: existsSync(journalPath),
    },
  }
}

/** The journal, or the empty one drizzle-kit starts a folder with. */
function readJournal(path: string, dialect: Dialect): DrizzleJournal {
  if (existsSync(path)) return JSON.parse(readFileSync(path, 'utf8')) as DrizzleJournal
  return {
    version: dialect === 'postgres' ? '7' : '6',
    dialect: dialect === 'postgres' ? 'postgresql' : 'sqlite',
    entries: [],
  }
}
