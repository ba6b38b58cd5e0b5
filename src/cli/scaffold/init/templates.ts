import type { Dialect } from '../../../db/database.ts'

/**
 * kiln's own tables, created by `kilnjs migrate`: the drizzle-kit config excludes them so that
 * `drizzle-kit push` / `pull` never propose to drop or re-create them.
 */
export const KILN_TABLES_FILTER = ['!api_keys', '!oauth_*', '!kiln_*']

export interface InitTemplateInput {
  dialect: Dialect
  /** Paths relative to the app root, written as `./…`. */
  schema: string
  out: string
  migrations: string
}

const dot = (path: string) => (path.startsWith('.') ? path : `./${path}`)

export function kilnConfigTemplate(input: InitTemplateInput): string {
  return `import { defineConfig } from 'kilnjs'

/** Where kiln finds your Drizzle tables and where it writes (paths relative to this file). */
export default defineConfig({
  dialect: '${input.dialect}',
  schema: '${dot(input.schema)}',
  out: '${dot(input.out)}',
  // drizzle-kit writes your tables' migrations here; \`kilnjs migrate\` applies kiln's, then these.
  migrations: '${dot(input.migrations)}',
})
`
}

export function drizzleConfigTemplate(input: InitTemplateInput): string {
  const credentials =
    input.dialect === 'postgres'
      ? `  dialect: 'postgresql',\n  dbCredentials: { url: process.env.DATABASE_URL ?? '' },`
      : `  dialect: 'sqlite',\n  // kiln's URLs say sqlite:<path>; drizzle-kit wants the bare path.\n  dbCredentials: { url: process.env.DATABASE_URL?.replace(/^(sqlite|file):/, '') ?? 'storage/app.db' },`
  return `import { defineConfig } from 'drizzle-kit'

export default defineConfig({
${credentials}
  schema: '${dot(input.schema)}',
  out: '${dot(input.migrations)}',
  // kiln's tables (created by \`kilnjs migrate\`) are not part of your schema: leave them alone.
  tablesFilter: [${KILN_TABLES_FILTER.map((pattern) => `'${pattern}'`).join(', ')}],
})
`
}

export interface MainTemplateInput {
  dialect: Dialect
  /** The generated API module as imported from main.ts: `./api/index.js`. */
  apiImport: string
  appName: string
  /** A model has a password column: the generated API then needs `hashPassword`. */
  hashesPasswords?: boolean
}

/** A minimal entry point serving the generated API and its docs. */
export function mainTemplate(input: MainTemplateInput): string {
  const dialectName = input.dialect === 'postgres' ? 'PostgreSQL' : 'SQLite'
  const core = input.hashesPasswords
    ? 'createLogger, createPasswordHasher, errorHandler'
    : 'createLogger, errorHandler'
  const hasher = input.hashesPasswords
    ? `// Hashes the passwords the API stores; your login must verify with the same hasher.
const passwords = createPasswordHasher()
const hashPassword = (password: string) => passwords.hash(password)
`
    : ''
  const deps = input.hashesPasswords
    ? 'database, apiKeys, limiters, hashPassword'
    : 'database, apiKeys, limiters'
  return `import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { createRateLimiters } from 'kilnjs/api'
import { ${core} } from 'kilnjs/core'
import { createDatabase } from 'kilnjs/db'
import { apiKeyProvider, apiRoutes, docsRoutes } from '${input.apiImport}'

const logger = createLogger()
${
  input.dialect === 'postgres'
    ? `// DATABASE_URL, or embedded PGlite in storage/pgdata when it is unset (needs @electric-sql/pglite).
const database = await createDatabase(process.env.DATABASE_URL)`
    : `// DATABASE_URL, or storage/app.db (where the kiln command looks too) when it is unset.
const database = await createDatabase(process.env.DATABASE_URL ?? 'sqlite:storage/app.db')`
}
if (database.dialect !== '${input.dialect}') {
  throw new Error('DATABASE_URL must name a ${dialectName} database')
}

const apiKeys = apiKeyProvider({ database })
const limiters = createRateLimiters()
${hasher}
const app = new Hono()
app.onError(errorHandler({ logger }))
app.route('/', apiRoutes({ ${deps} }))
app.route('/', docsRoutes({ app, title: '${input.appName.replaceAll("'", "\\'")}' }))

const port = Number(process.env.PORT ?? 3000)
const server = serve({ fetch: app.fetch, port }, () => {
  logger.info(\`API on http://localhost:\${port}/api/v1, docs on http://localhost:\${port}/api/docs\`)
})

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => server.close(() => void database.close()))
}
`
}
