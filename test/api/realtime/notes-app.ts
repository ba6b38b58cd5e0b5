import { eq } from 'drizzle-orm'
import { pgTable, text as pgText, serial, timestamp } from 'drizzle-orm/pg-core'
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { Hono } from 'hono'
import { z } from 'zod'
import {
  type ApiEnv,
  apiGuard,
  createApiKey,
  createDatabaseApiKeyProvider,
  createRealtime,
  createRecordCounter,
  defineResource,
  type Realtime,
  type RealtimeOptions,
  resourceCall,
  resourceOperations,
} from '../../../src/api/index.ts'
import { createRateLimiters } from '../../../src/core/http/rate-limiters.ts'
import { errorHandler, silentLogger } from '../../../src/core/index.ts'
import { type Database, migrate, postgresDb, sqliteDb } from '../../../src/db/index.ts'
import type { DatabaseBackend } from '../../support/databases.ts'
import { execSql } from '../support.ts'

const pgNotes = pgTable('notes', {
  id: serial('id').primaryKey(),
  title: pgText('title').notNull(),
  owner: pgText('owner').notNull().default('public'),
  password_digest: pgText('password_digest'),
  deleted_at: timestamp('deleted_at', { withTimezone: true }),
})
const sqliteNotes = sqliteTable('notes', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  title: text('title').notNull(),
  owner: text('owner').notNull().default('public'),
  password_digest: text('password_digest'),
  deleted_at: text('deleted_at'),
})

const CREATE = {
  postgres: `CREATE TABLE notes (id serial PRIMARY KEY, title text NOT NULL,
    owner text NOT NULL DEFAULT 'public', password_digest text, deleted_at timestamptz)`,
  sqlite: `CREATE TABLE notes (id integer PRIMARY KEY AUTOINCREMENT, title text NOT NULL,
    owner text NOT NULL DEFAULT 'public', password_digest text, deleted_at text)`,
}

const Note = z.object({
  title: z.string(),
  owner: z.string().optional(),
  password_digest: z.string().optional(),
})

/**
 * `notes`: soft-deleting, with a credential column and a row filter: a key without `*` reads the
 * public notes only.
 */
function notesResource(dialect: 'postgres' | 'sqlite') {
  const table = dialect === 'postgres' ? pgNotes : sqliteNotes
  return defineResource(table as typeof sqliteNotes, {
    filter: ['id', 'title', 'owner'],
    requests: { create: Note, update: Note.partial() },
    rows: (caller) =>
      caller?.scopes.includes('*')
        ? undefined
        : { where: eq(table.owner, 'public'), key: 'public' },
  })
}

/** One instance of the notes API on a database, with its realtime core. */
export interface NotesApp {
  app: Hono
  realtime: Realtime
  /** A key with these scopes, as its Authorization header. */
  key(scopes: string[]): Promise<{ authorization: string; id: number }>
  writer: { authorization: string }
  request(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<Response>
  close(): Promise<void>
}

/** Creates the notes table on a migrated database (once per database). */
export async function prepareNotes(database: Database): Promise<void> {
  await migrate(database)
  await execSql(database, CREATE[database.dialect])
}

/** An instance of the notes API on `database`, its realtime core made with `options`. */
export async function notesApp(
  database: Database,
  options: RealtimeOptions = {},
): Promise<NotesApp> {
  const apiKeys = createDatabaseApiKeyProvider({ database, logger: silentLogger() })
  const realtime = createRealtime({ apiKeys, logger: silentLogger(), ...options })
  const db = database.dialect === 'postgres' ? postgresDb(database) : sqliteDb(database)
  const kiln = resourceOperations(notesResource(database.dialect), {
    db,
    counts: createRecordCounter(),
    realtime,
  })
  const limiters = createRateLimiters({ limiters: { api: { points: 1_000_000 } } })
  const app = new Hono()
  app.onError(errorHandler({ logger: silentLogger() }))
  const notes = new Hono<ApiEnv>()
    .get('/', kiln.scope.index, async (c) => c.json(await kiln.index(resourceCall(c))))
    .get('/events', kiln.scope.events, async (c) => kiln.events(resourceCall(c)))
    .post('/', kiln.scope.store, async (c) => c.json(await kiln.store(resourceCall(c)), 201))
    .get('/:id', kiln.scope.show, async (c) => c.json(await kiln.show(resourceCall(c))))
    .patch('/:id', kiln.scope.update, async (c) => c.json(await kiln.update(resourceCall(c))))
    .delete('/:id', kiln.scope.destroy, async (c) => c.json(await kiln.destroy(resourceCall(c))))
    .patch('/', kiln.scope.updateMany, async (c) => c.json(await kiln.updateMany(resourceCall(c))))
    .delete('/', kiln.scope.destroyMany, async (c) =>
      c.json(await kiln.destroyMany(resourceCall(c))),
    )
    .post('/:id/restore', kiln.scope.restore, async (c) =>
      c.json(await kiln.restore(resourceCall(c))),
    )
  const api = new Hono<ApiEnv>()
    .basePath('/api/v1')
    .onError(errorHandler({ logger: silentLogger() }))
    .use(apiGuard({ apiKeys, limiters, logger: silentLogger() }))
    .route('/notes', notes)
  app.route('/', api)
  const key = async (scopes: string[]) => {
    const { rawKey, record } = await createApiKey(database, { name: `k-${scopes}`, scopes })
    return { authorization: `Bearer ${rawKey}`, id: record.id }
  }
  const writer = await key(['*'])
  return {
    app,
    realtime,
    key,
    writer,
    async request(method, path, body, headers = { authorization: writer.authorization }) {
      const init: RequestInit = { method, headers: { ...headers } }
      if (body !== undefined) {
        init.body = JSON.stringify(body)
        init.headers = { 'content-type': 'application/json', ...headers }
      }
      return app.request(path, init)
    },
    async close() {
      await realtime.close()
      await apiKeys.close()
    },
  }
}

/** A backend's database with the notes table, and its cleanup. */
export async function notesDatabase(backend: DatabaseBackend) {
  const test = await backend.create()
  await prepareNotes(test.database)
  return test
}
