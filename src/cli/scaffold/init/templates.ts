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

/** What the entry point imports from kilnjs/core. */
const MAIN_CORE_IMPORTS = [
  'createLogger',
  'createRateLimiters',
  'createSharedState',
  'errorHandler',
  'healthRoutes',
  'loadAppConfig',
  'noSniff',
  'requestLog',
]

/**
 * The app's entry point: configuration read once (`loadAppConfig`: PORT, HOST, DATABASE_URL,
 * REDIS_URL, TRUST_PROXY, LOG_LEVEL, LOG_FORMAT), state shared through Redis when it is set (rate
 * limits count across instances), one log line per request, and a graceful stop.
 */
export function mainTemplate(input: MainTemplateInput): string {
  const dialectName = input.dialect === 'postgres' ? 'PostgreSQL' : 'SQLite'
  const hasher = input.hashesPasswords
    ? `// Hashes the passwords the API stores; your login must verify with the same hasher.
const passwords = createPasswordHasher()
const hashPassword = (password: string) => passwords.hash(password)
`
    : ''
  // The app's logger: /api/v1's refusals and 500s come out in the app's format, not a JSON one.
  const deps = input.hashesPasswords
    ? 'database, apiKeys, limiters, hashPassword, logger'
    : 'database, apiKeys, limiters, logger'
  const database = databaseTemplate(input.dialect)
  return `import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { setCursorKey } from 'kilnjs/api'
import { ${MAIN_CORE_IMPORTS.join(', ')} } from 'kilnjs/core'
import { checkDatabase, createDatabase } from 'kilnjs/db'
${input.hashesPasswords ? "import { createPasswordHasher } from 'kilnjs/session'\n" : ''}import { apiKeyProvider, apiRoutes, docsRoutes } from '${input.apiImport}'

// Every setting comes from the environment, checked once: a wrong value stops here with one line.
// APP_NAME, unless set, is this package's name: the docs, consent and approval pages show it.
const config = loadAppConfig(process.env, { appName: '${input.appName.replaceAll("'", "\\'")}' })
const logger = createLogger({ level: config.logLevel, format: config.logFormat })
// APP_KEY (else MCP_TOKEN_SECRET) signs the list cursors, the same on every instance.
setCursorKey(config.appKey)

${database}
if (database.dialect !== '${input.dialect}') {
  throw new Error('DATABASE_URL must name a ${dialectName} database')
}
// A database that does not answer (no such database, a wrong password) stops the start here.
await checkDatabase(database)
// With REDIS_URL, what instances must share (rate limits, one-time codes) lives in Redis; each
// command answers within REDIS_COMMAND_TIMEOUT_MS (default 5000).
const shared = await createSharedState({
  redisUrl: config.redisUrl,
  commandTimeoutMs: config.redisCommandTimeoutMs,
  logger,
})
const redis = shared.client

const apiKeys = apiKeyProvider({ database })
// TRUST_PROXY: behind a load balancer, count each client by its own address, not the proxy's.
const limiters = createRateLimiters({ trustProxy: config.trustProxy, redis: shared.client, logger })
${hasher}
const app = new Hono()
app.onError(errorHandler({ logger }))
// nosniff on every answer, the app's own routes too: no JSON is ever sniffed into a page.
app.use('*', noSniff(), requestLog({ logger }))
// /health/live for liveness, /health/ready (and /health) for readiness, each within a second.
app.route(
  '/',
  healthRoutes({
    checks: { database: () => database.ping(), ...(redis ? { redis: () => redis.ping() } : {}) },
    logger,
  }),
)
app.route('/', apiRoutes({ ${deps} }))
app.route('/', docsRoutes({ app, title: config.appName }))

const server = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, () => {
  logger.info(\`API on \${config.appUrl}/api/v1, docs on \${config.appUrl}/api/docs\`)
})

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () =>
    server.close(async () => {
      await shared.close()
      await database.close()
    }),
  )
}
`
}

/** Opening the database, with every wait's budget from the config (PostgreSQL), or the file. */
function databaseTemplate(dialect: MainTemplateInput['dialect']): string {
  return dialect === 'postgres'
    ? `// DATABASE_URL, or embedded PGlite in storage/pgdata when it is unset (needs @electric-sql/pglite).
// Every wait has a budget, past which the request answers 503: a pooled connection within
// DATABASE_CONNECT_TIMEOUT_MS (default 5000), each statement's answer within
// DATABASE_QUERY_TIMEOUT_MS (default: the statement timeout plus 2000). A list query past DATABASE_STATEMENT_TIMEOUT_MS
// (default 5000) is cancelled; DATABASE_SLOW_QUERY_CONCURRENCY such queries run at once, the
// others wait their turn for at most DATABASE_SLOW_QUERY_WAIT_MS (default 5000).
const database = await createDatabase(config.databaseUrl, {
  connectTimeoutMs: config.databaseConnectTimeoutMs,
  queryTimeoutMs: config.databaseQueryTimeoutMs,
  statementTimeoutMs: config.databaseStatementTimeoutMs,
  slowQueryConcurrency: config.databaseSlowQueryConcurrency,
  slowQueryWaitMs: config.databaseSlowQueryWaitMs,
  // Behind a transaction pooler, the server's own address: the API-key change feed LISTENs there.
  directUrl: config.databaseDirectUrl,
  logger,
})`
    : `// DATABASE_URL, or storage/app.db (where the kilnjs command looks too) when it is unset.
const database = await createDatabase(config.databaseUrl ?? 'sqlite:storage/app.db')`
}
