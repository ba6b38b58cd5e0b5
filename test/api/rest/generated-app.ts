import { randomBytes } from 'node:crypto'
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { Hono } from 'hono'
import {
  createApiKey,
  createDatabaseApiKeyProvider,
  type RecordCounter,
} from '../../../src/api/index.ts'
import { runMakeApi } from '../../../src/cli/commands/make-api.ts'
import { createRateLimiters } from '../../../src/core/http/rate-limiters.ts'
import { errorHandler, type KeyValueStore, silentLogger } from '../../../src/core/index.ts'
import { type Database, migrate } from '../../../src/db/index.ts'
import type { DatabaseBackend } from '../../support/databases.ts'

const repo = resolve(import.meta.dirname, '../../..')

/** The two apps the generated API runs on: the demo (Postgres) and the SQLite fixture. */
export const APPS = {
  postgres: {
    schema: join(repo, 'examples/demo/src/schema.ts'),
    migrations: join(repo, 'examples/demo/migrations'),
  },
  sqlite: {
    schema: join(repo, 'test/fixtures/sqlite-app/schema.ts'),
    migrations: join(repo, 'test/fixtures/sqlite-app/migrations'),
  },
} as const

/** Every kind of column, per dialect: test/fixtures/kitchen-sink. */
export const KITCHEN_SINK = {
  postgres: {
    schema: join(repo, 'test/fixtures/kitchen-sink/postgres/schema.ts'),
    migrations: join(repo, 'test/fixtures/kitchen-sink/postgres/migrations'),
  },
  sqlite: {
    schema: join(repo, 'test/fixtures/kitchen-sink/sqlite/schema.ts'),
    migrations: join(repo, 'test/fixtures/kitchen-sink/sqlite/migrations'),
  },
} as const

/** Tools and bookings: a numeric rate, a unique pair, a created_at the database fills. */
export const RENTALS = {
  postgres: {
    schema: join(repo, 'test/fixtures/rentals/postgres/schema.ts'),
    migrations: join(repo, 'test/fixtures/rentals/postgres/migrations'),
  },
  sqlite: {
    schema: join(repo, 'test/fixtures/rentals/sqlite/schema.ts'),
    migrations: join(repo, 'test/fixtures/rentals/sqlite/migrations'),
  },
} as const

/** Documents with a `deleted_at` column (soft delete); a UUID key on Postgres. */
export const TRASH = {
  postgres: {
    schema: join(repo, 'test/fixtures/trash/postgres/schema.ts'),
    migrations: join(repo, 'test/fixtures/trash/postgres/migrations'),
  },
  sqlite: {
    schema: join(repo, 'test/fixtures/trash/sqlite/schema.ts'),
    migrations: join(repo, 'test/fixtures/trash/sqlite/migrations'),
  },
} as const

export interface ScaffoldedApp {
  /** The temporary app root (kiln.config.ts, src/schema.ts, src/api/, migrations/). */
  root: string
  outDir: string
  dialect: 'postgres' | 'sqlite'
  cleanup(): void
}

/**
 * A copy of the demo's (or the SQLite fixture's) schema and migrations in a temporary app under
 * the repository (so `kilnjs/*` and drizzle resolve), with `make:api --all --yes` run on it.
 */
export async function scaffoldApp(
  dialect: 'postgres' | 'sqlite',
  flags: {
    exclude?: string[]
    includeAll?: boolean
    models?: string[]
    /** Another app's schema and migrations than the demo's or the SQLite fixture's. */
    app?: { schema: string; migrations: string }
  } = {},
): Promise<ScaffoldedApp> {
  const root = join(repo, 'tmp', `api-test-${randomBytes(5).toString('hex')}`)
  const app = flags.app ?? APPS[dialect]
  mkdirSync(join(root, 'src'), { recursive: true })
  cpSync(app.schema, join(root, 'src/schema.ts'))
  cpSync(app.migrations, join(root, 'migrations'), { recursive: true })
  writeFileSync(
    join(root, 'kiln.config.ts'),
    `import { defineConfig } from 'kilnjs'\n\nexport default defineConfig({\n  dialect: '${dialect}',\n  schema: './src/schema.ts',\n  out: './src/api',\n  migrations: './migrations',\n})\n`,
  )
  await runMakeApi({
    cwd: root,
    all: flags.models === undefined,
    models: flags.models,
    yes: true,
    exclude: flags.exclude,
    includeAll: flags.includeAll,
    print: () => {},
  })
  return {
    root,
    outDir: join(root, 'src/api'),
    dialect,
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  }
}

/** The generated module's exports, as the tests use them. */
export interface GeneratedApi {
  // biome-ignore lint/suspicious/noExplicitAny: the generated module's types are the app's
  apiRoutes(deps: any): Hono<any>
  docsRoutes(options: { app: Hono; title: string; version?: string; description?: string }): Hono
  apiResources: Array<{ name: string; model: string }>
}

export interface RunningApi {
  app: Hono
  database: Database
  /** `Authorization` header of a valid key. */
  auth: { authorization: string }
  rawKey: string
  request(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<Response>
  /** A user row to hang posts on (its id). */
  createUser(): Promise<number>
  close(): Promise<void>
}

/**
 * Builds an app from the generated module on a fresh database of `backend`: migrations (kiln's
 * then the app's), a real key, the limiter raised so tests are not throttled.
 */
export async function startGeneratedApi(
  scaffolded: ScaffoldedApp,
  backend: DatabaseBackend,
  options: {
    apiLimit?: number
    title?: string
    extend?: (api: Hono) => void
    /** The list totals' counter (the generated default: one of its own). */
    counts?: RecordCounter
    /** Where Idempotency-Key answers are kept (the generated default: this process's memory). */
    idempotencyStore?: KeyValueStore
  } = {},
): Promise<RunningApi> {
  const test = await backend.create()
  const { database } = test
  await migrate(database, { appMigrationsDir: join(scaffolded.root, 'migrations') })
  const api = (await import(join(scaffolded.outDir, 'index.ts'))) as GeneratedApi
  const apiKeys = createDatabaseApiKeyProvider({ database, logger: silentLogger() })
  const limiters = createRateLimiters({
    limiters: { api: { points: options.apiLimit ?? 1_000_000 } },
  })
  const { rawKey } = await createApiKey(database, { name: 'tests', scopes: ['*'] })
  const app = new Hono()
  app.onError(errorHandler({ logger: silentLogger() }))
  const group = api.apiRoutes({
    database,
    apiKeys,
    limiters,
    hashPassword: testHashPassword,
    logger: silentLogger(),
    ...(options.counts ? { counts: options.counts } : {}),
    ...(options.idempotencyStore ? { idempotencyStore: options.idempotencyStore } : {}),
  })
  options.extend?.(group)
  app.route('/', group)
  app.route('/', api.docsRoutes({ app, title: options.title ?? 'Test App' }))
  const auth = { authorization: `Bearer ${rawKey}` }
  let counter = 0
  const running: RunningApi = {
    app,
    database,
    auth,
    rawKey,
    async request(method, path, body, headers = {}) {
      const init: RequestInit = { method, headers: { ...auth, ...headers } }
      if (body !== undefined) {
        init.body = typeof body === 'string' ? body : JSON.stringify(body)
        init.headers = { 'content-type': 'application/json', ...auth, ...headers }
      }
      return app.request(path, init)
    },
    async createUser() {
      counter++
      const response = await running.request('POST', '/api/v1/users', {
        email: `user${counter}-${randomBytes(3).toString('hex')}@example.com`,
        name: `User ${counter}`,
        password: 'correct horse battery staple',
      })
      if (response.status !== 201)
        throw new Error(`createUser: ${response.status} ${await response.text()}`)
      return ((await response.json()) as { data: { id: number } }).data.id
    },
    async close() {
      await apiKeys.close()
      await test.cleanup()
    },
  }
  return running
}

/** The hasher the tests give the generated API: marks the password so a test can see it was hashed. */
export async function testHashPassword(password: string): Promise<string> {
  return `hashed:${Buffer.from(password).toString('base64')}`
}
