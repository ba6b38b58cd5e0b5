import type { Dialect } from '../../db/database.ts'

export interface EntryWiringInput {
  dialect: Dialect
  /** The generated API as the entry point imports it: `./api/index.js`. */
  apiImport: string
  /** A model stores a password: `apiRoutes` then needs `hashPassword`. */
  hashesPasswords: boolean
  /** The docs' title: the package's name. */
  appName: string
}

/**
 * The lines that mount kiln in an app's own entry point, after its `app` and its Drizzle `db`
 * exist: `init` (when the entry point is the app's) and `make:api` print exactly these. A
 * Postgres app hands kiln its Drizzle db's pg pool (`db.$client`), so kiln and the app share
 * one pool; a SQLite app names its file.
 */
export function entryWiring(input: EntryWiringInput): string[] {
  const database =
    input.dialect === 'postgres'
      ? "const database = await createDatabase(db.$client) // your Drizzle db's pg pool: one pool for both"
      : "const database = await createDatabase(process.env.DATABASE_URL ?? 'sqlite:storage/app.db')"
  const title = input.appName.replaceAll("'", "\\'")
  return [
    "import { createRateLimiters } from 'kilnjs/core'",
    "import { checkDatabase, createDatabase } from 'kilnjs/db'",
    ...(input.hashesPasswords ? ["import { createPasswordHasher } from 'kilnjs/session'"] : []),
    `import { apiKeyProvider, apiRoutes, docsRoutes } from '${input.apiImport}'`,
    database,
    'await checkDatabase(database)',
    ...(input.hashesPasswords
      ? [
          "const passwords = createPasswordHasher() // or your login's hasher",
          'const hashPassword = (password: string) => passwords.hash(password)',
        ]
      : []),
    `app.route('/', apiRoutes({ database, apiKeys: apiKeyProvider({ database }), limiters: createRateLimiters()${input.hashesPasswords ? ', hashPassword' : ''} }))`,
    `app.route('/', docsRoutes({ app, title: '${title}' }))`,
  ]
}
