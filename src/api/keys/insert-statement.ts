import type { Dialect } from '../../db/database.ts'

/** The column values of one `api_keys` row: what `apiKeyInsertSql` writes and the provider inserts. */
export interface ApiKeyInsertValues {
  name: string
  prefix: string
  hashedKey: string
  /** The `scopes` column: a JSON array, or null. */
  scopes: string | null
  expiresAt: Date | null
  createdAt: Date
}

/** A SQL string literal: single quotes doubled. Refuses NUL, which no SQL literal can hold. */
export function sqlString(value: string): string {
  if (value.includes('\u0000')) throw new TypeError('SQL strings cannot contain NUL characters')
  return `'${value.replaceAll("'", "''")}'`
}

/**
 * A ready-to-run `INSERT INTO api_keys` for the dialect. Postgres gets ISO timestamps for
 * its `timestamptz` columns; SQLite gets milliseconds since the epoch, as kiln's SQLite
 * table stores them.
 */
export function apiKeyInsertSql(dialect: Dialect, values: ApiKeyInsertValues): string {
  const time = (date: Date | null) =>
    date === null
      ? 'NULL'
      : dialect === 'postgres'
        ? sqlString(date.toISOString())
        : String(date.getTime())
  const columns = ['name', 'prefix', 'hashed_key', 'scopes', 'expires_at', 'created_at']
  const row = [
    sqlString(values.name),
    sqlString(values.prefix),
    sqlString(values.hashedKey),
    values.scopes === null ? 'NULL' : sqlString(values.scopes),
    time(values.expiresAt),
    time(values.createdAt),
  ]
  return `INSERT INTO "api_keys" (${columns.map((c) => `"${c}"`).join(', ')}) VALUES (${row.join(', ')});`
}

/** A TypeScript snippet inserting the same record with Drizzle (`db` is the app's database). */
export function apiKeyInsertSnippet(dialect: Dialect, values: ApiKeyInsertValues): string {
  const table = dialect === 'postgres' ? 'apiKeysPg' : 'apiKeysSqlite'
  const lines = [
    `import { ${table} } from 'kilnjs/db'`,
    '',
    `await db.insert(${table}).values({`,
    `  name: ${JSON.stringify(values.name)},`,
    `  prefix: ${JSON.stringify(values.prefix)},`,
    `  hashedKey: ${JSON.stringify(values.hashedKey)},`,
  ]
  if (values.scopes !== null) lines.push(`  scopes: ${JSON.stringify(values.scopes)},`)
  if (values.expiresAt !== null) {
    lines.push(`  expiresAt: new Date(${JSON.stringify(values.expiresAt.toISOString())}),`)
  }
  if (dialect === 'sqlite') {
    lines.push(`  createdAt: new Date(${JSON.stringify(values.createdAt.toISOString())}),`)
  }
  lines.push('})')
  return lines.join('\n')
}
