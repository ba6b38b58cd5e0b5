/**
 * A query on a table the database does not have: the app was started before its migrations
 * ran. Recognised from the driver's error under drizzle's wrapper: PostgreSQL's 42P01
 * (`relation "books" does not exist`), SQLite's `no such table: books`.
 */
export function missingTable(error: unknown): string | undefined {
  let current: unknown = error
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code
    const postgres = /relation "([^"]+)" does not exist/.exec(current.message)
    if (postgres && (code === '42P01' || code === undefined)) return postgres[1]
    const sqlite = /no such table: (\S+)/.exec(current.message)
    if (sqlite) return sqlite[1]
    current = current.cause
  }
  return undefined
}

/** What an operator runs to create the app's tables, as `kilnjs init` sets the app up. */
export const MIGRATE_HINT =
  'run `npx drizzle-kit generate` (if its migration is not written yet), then `npx kilnjs migrate`'
