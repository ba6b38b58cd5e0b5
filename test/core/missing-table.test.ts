import { join } from 'node:path'
import { Writable } from 'node:stream'
import { pgTable, serial, text } from 'drizzle-orm/pg-core'
import { integer, sqliteTable, text as sqliteText } from 'drizzle-orm/sqlite-core'
import { Hono } from 'hono'
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest'
import { createApiKey, createDatabaseApiKeyProvider } from '../../src/api/index.ts'
import { createRateLimiters } from '../../src/core/http/rate-limiters.ts'
import { createLogger, errorHandler, type Logger } from '../../src/core/index.ts'
import { migrate } from '../../src/db/index.ts'
import {
  type GeneratedApi,
  type ScaffoldedApp,
  scaffoldApp,
  testHashPassword,
} from '../api/rest/generated-app.ts'
import {
  type DatabaseBackend,
  describeEachDatabase,
  type TestDatabase,
} from '../support/databases.ts'

// A table the app's schema declares but no migration has created yet.
const booksPg = pgTable('books', { id: serial('id').primaryKey(), title: text('title') })
const booksSqlite = sqliteTable('books', {
  id: integer('id').primaryKey(),
  title: sqliteText('title'),
})

/** A logger whose lines the test reads. */
function capturedLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = []
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk))
      done()
    },
  })
  return { logger: createLogger({ destination }), lines }
}

const MIGRATE_ADVICE =
  'run `npx drizzle-kit generate` (if its migration is not written yet), then `npx kilnjs migrate`'
const NOT_MIGRATED = {
  error: 'Service Unavailable: the database is not migrated',
  code: 'database_not_migrated',
}

describeEachDatabase('an app started before its migrations ran', (backend: DatabaseBackend) => {
  let opened: TestDatabase | undefined
  let scaffolded: ScaffoldedApp
  let api: GeneratedApi

  beforeAll(async () => {
    scaffolded = await scaffoldApp(backend.dialect)
    api = (await import(join(scaffolded.outDir, 'index.ts'))) as GeneratedApi
  }, 120_000)
  afterAll(() => scaffolded.cleanup())

  afterEach(async () => {
    await opened?.cleanup()
  })

  /** The generated API on `database`, as the app's main module wires it, logging to `logger`. */
  function generatedApp(database: TestDatabase['database'], logger: Logger) {
    const apiKeys = createDatabaseApiKeyProvider({ database, logger })
    const app = new Hono()
    app.onError(errorHandler({ logger }))
    const limiters = createRateLimiters()
    app.route(
      '/',
      api.apiRoutes({ database, apiKeys, limiters, hashPassword: testHashPassword, logger }),
    )
    return { app, apiKeys }
  }

  it('without any table: the generated API starts, and a key answers 503 with one line of advice', async () => {
    opened = await backend.create()
    const { logger, lines } = capturedLogger()
    const { app, apiKeys } = generatedApp(opened.database, logger)
    try {
      for (let i = 0; i < 3; i++) {
        const response = await app.request('/api/v1/posts/1', {
          headers: { authorization: `Bearer kl_live_${'a'.repeat(43)}` },
        })
        expect(response.status).toBe(503)
        expect(await response.json()).toEqual(NOT_MIGRATED)
      }
    } finally {
      await apiKeys.close()
    }
    expect(lines.map((line) => JSON.parse(line).msg)).toEqual([
      `The database has no table "api_keys": ${MIGRATE_ADVICE}`,
    ])
  })

  it("with kiln's tables but not the app's: show and list answer 503, one line per table, until it is migrated", async () => {
    opened = await backend.create()
    await migrate(opened.database)
    const { rawKey } = await createApiKey(opened.database, { name: 'early', scopes: ['*'] })
    const { logger, lines } = capturedLogger()
    const { app, apiKeys } = generatedApp(opened.database, logger)
    const headers = { authorization: `Bearer ${rawKey}`, 'content-type': 'application/json' }
    try {
      for (let i = 0; i < 2; i++) {
        for (const [method, path] of [
          ['GET', '/api/v1/posts/1'],
          ['GET', '/api/v1/posts'],
          ['GET', '/api/v1/users/1'],
        ] as const) {
          const response = await app.request(path, { method, headers })
          expect(response.status, `${method} ${path}`).toBe(503)
          expect(await response.json()).toEqual(NOT_MIGRATED)
        }
      }
      // Migrated while it runs: the same app answers without a restart.
      await migrate(opened.database, { appMigrationsDir: join(scaffolded.root, 'migrations') })
      expect((await app.request('/api/v1/posts/1', { headers })).status).toBe(404)
      expect((await app.request('/api/v1/posts', { headers })).status).toBe(200)
    } finally {
      await apiKeys.close()
    }
    expect(lines.map((line) => JSON.parse(line).msg).sort()).toEqual([
      `The database has no table "posts": ${MIGRATE_ADVICE}`,
      `The database has no table "users": ${MIGRATE_ADVICE}`,
    ])
  })

  it('answers 503 and logs once which table is missing and what to run', async () => {
    opened = await backend.create()
    const { database } = opened
    const lines: string[] = []
    const destination = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk))
        done()
      },
    })
    const app = new Hono()
    app.onError(errorHandler({ logger: createLogger({ destination }) }))
    app.get('/books', async (c) => {
      const rows =
        database.dialect === 'sqlite'
          ? await database.db.select().from(booksSqlite)
          : await database.db.select().from(booksPg)
      return c.json(rows)
    })
    for (let i = 0; i < 3; i++) {
      const response = await app.request('/books')
      expect(response.status).toBe(503)
      expect(await response.json()).toEqual({
        error: 'Service Unavailable: the database is not migrated',
        code: 'database_not_migrated',
      })
    }
    expect(lines).toHaveLength(1)
    const logged = JSON.parse(lines[0] ?? '{}')
    expect(logged.table).toBe('books')
    expect(logged.msg).toBe(
      'The database has no table "books": run `npx drizzle-kit generate` (if its migration is not written yet), then `npx kilnjs migrate`',
    )
  })
})
