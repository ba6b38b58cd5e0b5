import { fileURLToPath } from 'node:url'
import { eq } from 'drizzle-orm'
import { setCursorKey } from 'kilnjs/api'
import {
  type AppConfig,
  createLogger,
  createRateLimiters,
  createSharedState,
  type Env,
  type Logger,
  loadAppConfig,
  type RateLimiters,
  Redactor,
  type SharedState,
} from 'kilnjs/core'
import {
  checkDatabase,
  createDatabase,
  createModelRegistry,
  type ModelRegistry,
  migrate,
  type PostgresDatabase,
} from 'kilnjs/db'
import { createSessionStore, type SessionStore } from 'kilnjs/session'
import { passwords, userCredentialStamp } from './auth.ts'
import * as schema from './schema.ts'

export interface DemoContext {
  config: AppConfig
  env: Env
  logger: Logger
  redactor: Redactor
  database: PostgresDatabase
  shared: SharedState
  /** The one set of rate limiters: the API, the OAuth server and the login count through it. */
  limiters: RateLimiters
  sessions: SessionStore
  models: ModelRegistry
  demoUser: { email: string; password: string; generated: boolean }
  /** Runs `cleanup` when the context closes, before shared state and the database close. */
  onClose(cleanup: () => Promise<void>): void
  close(): Promise<void>
}

export interface DemoContextOptions {
  env?: Env
  /** Overrides DATABASE_URL (tests pass `pglite:` for an in-memory database). */
  databaseUrl?: string
  logger?: Logger
  /** Prefix for Redis keys and queues, so tests and apps can share one Redis. */
  redisPrefix?: string
  /** Where embedded PGlite keeps its data without a URL. */
  pgliteDir?: string
}

export const migrationsDir = fileURLToPath(new URL('../migrations', import.meta.url))

/** Opens everything the demo needs, migrates, and makes sure the demo user exists. */
export async function createDemoContext(options: DemoContextOptions = {}): Promise<DemoContext> {
  const env = options.env ?? process.env
  const config = loadAppConfig(env)
  // APP_KEY (else MCP_TOKEN_SECRET) signs the list cursors, the same on every instance.
  setCursorKey(config.appKey)
  const redactor = new Redactor()
  const logger =
    options.logger ?? createLogger({ level: config.logLevel, format: config.logFormat, redactor })
  const database = await createDatabase(options.databaseUrl ?? config.databaseUrl, {
    pgliteDir: options.pgliteDir ?? 'storage/pgdata',
    connectTimeoutMs: config.databaseConnectTimeoutMs,
    queryTimeoutMs: config.databaseQueryTimeoutMs,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    slowQueryConcurrency: config.databaseSlowQueryConcurrency,
    slowQueryWaitMs: config.databaseSlowQueryWaitMs,
    // Behind a transaction pooler: the server's own address, where the API-key change feed
    // LISTENs (without it, start-up says so once and keys are looked up on every request).
    directUrl: config.databaseDirectUrl,
    logger,
  })
  if (database.dialect !== 'postgres') {
    await database.close()
    throw new TypeError(
      'The demo is a Postgres app: DATABASE_URL must be a postgres:// URL (or unset)',
    )
  }
  let shared: SharedState | undefined
  try {
    await checkDatabase(database)
    await migrate(database, { appMigrationsDir: migrationsDir, logger })
    // Several apps (or test runs) can share one Redis under different prefixes.
    const redisPrefix = options.redisPrefix ?? env.REDIS_PREFIX ?? 'kiln-demo'
    shared = await createSharedState({
      redisUrl: config.redisUrl,
      commandTimeoutMs: config.redisCommandTimeoutMs,
      logger,
      prefix: redisPrefix,
    })
    const demoUser = await ensureDemoUser(database, env)
    const sessions = createSessionStore({
      store: shared.kv,
      secure: config.appUrl.startsWith('https:'),
      credentialStamp: userCredentialStamp(database),
    })
    const models = createModelRegistry(schema, 'postgres')
    const limiters = createRateLimiters({
      redis: shared.client,
      // The limits' counters too: another app on the same Redis keeps its own.
      prefix: `${redisPrefix}:rl`,
      trustProxy: config.trustProxy,
      logger,
    })
    const opened = shared
    const cleanups: (() => Promise<void>)[] = []
    return {
      config,
      env,
      logger,
      redactor,
      database,
      shared: opened,
      limiters,
      sessions,
      models,
      demoUser,
      onClose(cleanup) {
        cleanups.push(cleanup)
      },
      async close() {
        // Later registrations may depend on earlier ones: close in reverse order.
        for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
        await opened.close()
        await database.close()
      },
    }
  } catch (error) {
    await shared?.close()
    await database.close()
    throw error
  }
}

async function ensureDemoUser(database: PostgresDatabase, env: Env) {
  const email = (env.DEMO_EMAIL || 'demo@example.com').toLowerCase()
  const generated = !env.DEMO_PASSWORD
  const password = env.DEMO_PASSWORD || 'demo-password'
  const [existing] = await database.db
    .select({ id: schema.users.id, passwordHash: schema.users.passwordHash })
    .from(schema.users)
    .where(eq(schema.users.email, email))
    .limit(1)
  if (!existing) {
    await database.db
      .insert(schema.users)
      .values({ email, name: 'Demo User', passwordHash: await passwords.hash(password) })
      .onConflictDoNothing()
  } else if (!generated && !(await passwords.verify(password, existing.passwordHash))) {
    // DEMO_PASSWORD is the source of truth whenever it is set. The hash is the user's credential
    // stamp: rewritten when the password is the same, it would end every session and token at
    // each start.
    await database.db
      .update(schema.users)
      .set({ passwordHash: await passwords.hash(password) })
      .where(eq(schema.users.id, existing.id))
  }
  return { email, password, generated }
}
