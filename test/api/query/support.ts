import { join, resolve } from 'node:path'
import { drizzle as drizzleSqlite } from 'drizzle-orm/better-sqlite3'
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres'
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite'
import { Hono } from 'hono'
import {
  belongsTo,
  createRecordCounter,
  defineListQuery,
  hasMany,
  type ListQueryDefinition,
  privateCache,
  type RecordCounter,
  runListQuery,
} from '../../../src/api/index.ts'
import { errorHandler, silentLogger } from '../../../src/core/index.ts'
import { type Database, sqliteClient } from '../../../src/db/database.ts'
import { migrate } from '../../../src/db/index.ts'
import type { DatabaseBackend, TestDatabase } from '../../support/databases.ts'

const repo = resolve(import.meta.dirname, '../../..')
const APP = {
  postgres: {
    schema: join(repo, 'examples/demo/src/schema.ts'),
    migrations: join(repo, 'examples/demo/migrations'),
  },
  sqlite: {
    schema: join(repo, 'test/fixtures/sqlite-app/schema.ts'),
    migrations: join(repo, 'test/fixtures/sqlite-app/migrations'),
  },
}

// biome-ignore lint/suspicious/noExplicitAny: the two apps' schema modules differ by dialect
export type Schema = Record<string, any>

export interface QueryApp {
  app: Hono
  test: TestDatabase
  database: Database
  schema: Schema
  posts: ListQueryDefinition
  users: ListQueryDefinition
  counts: RecordCounter
  /** Serves `GET /x/<name>` with the engine and `definition`. */
  mount(name: string, definition: ListQueryDefinition): void
  /** SQL statements run through `countingDb` since the last `resetQueries()`. */
  queries: string[]
  resetQueries(): void
  get(path: string, headers?: Record<string, string>): Promise<Response>
  /** Inserts users and posts directly (`count` posts spread over `authors` users). */
  seed(count: number, authors?: number): Promise<{ userIds: number[] }>
  close(): Promise<void>
}

/**
 * A small Hono app with a posts and a users list built on the engine, over the demo's schema
 * (Postgres) or the SQLite fixture's, on a fresh database of `backend`. Its Drizzle instance
 * logs every statement, so tests can count round trips.
 */
export async function startQueryApp(
  backend: DatabaseBackend,
  options: { ttlMs?: number; estimateThreshold?: number } = {},
): Promise<QueryApp> {
  const test = await backend.create()
  const { database } = test
  await migrate(database, { appMigrationsDir: APP[backend.dialect].migrations })
  const schema = (await import(APP[backend.dialect].schema)) as Schema
  const queries: string[] = []
  const logger = { logQuery: (query: string) => void queries.push(query) }
  const db =
    database.dialect === 'sqlite'
      ? drizzleSqlite(sqliteClient(database)!, { logger })
      : database.pglite
        ? drizzlePglite(database.pglite, { logger })
        : drizzlePg((database.db as unknown as { $client: import('pg').Pool }).$client, { logger })
  const { posts, users } = schema
  const counts = createRecordCounter({ ttlMs: options.ttlMs ?? 5_000 })
  const postsQuery = defineListQuery(posts, {
    search: ['title', 'body'],
    include: { author: belongsTo(users, posts.authorId, users.id) },
    ...(options.estimateThreshold === undefined
      ? {}
      : { estimateThreshold: options.estimateThreshold }),
  })
  const usersQuery = defineListQuery(users, {
    include: { posts: hasMany(posts, posts.authorId, users.id, { limit: 2 }) },
  })
  // The engine's tests read every resource: a caller whose key has every scope.
  const caller = { scopes: ['*'] }
  const app = new Hono()
  app.onError(errorHandler({ logger: silentLogger() }))
  app.use(privateCache())
  app.get('/posts', async (c) =>
    c.json(await runListQuery(postsQuery, c.req.url, { db, counts, caller })),
  )
  app.get('/users', async (c) =>
    c.json(await runListQuery(usersQuery, c.req.url, { db, counts, caller })),
  )
  // Routes cannot be added once Hono has answered: tests mount definitions under /x/<name>.
  const mounted = new Map<string, ListQueryDefinition>()
  app.get('/x/:name', async (c) => {
    const definition = mounted.get(c.req.param('name'))
    if (!definition) return c.notFound()
    return c.json(await runListQuery(definition, c.req.url, { db, counts, caller }))
  })
  let seeded = 0
  return {
    app,
    test,
    database,
    schema,
    posts: postsQuery,
    users: usersQuery,
    counts,
    mount: (name, definition) => {
      mounted.set(name, definition)
    },
    queries,
    resetQueries: () => {
      queries.length = 0
    },
    get: async (path, headers = {}) => app.request(path, { headers }),
    async seed(count, authors = 3) {
      const anyDb = database.db as unknown as {
        insert(t: unknown): { values(v: unknown): { returning(): Promise<Array<{ id: number }>> } }
      }
      const userRows = await anyDb
        .insert(users)
        .values(
          Array.from({ length: authors }, (_, i) => ({
            email: `u${seeded}-${i}@example.com`,
            name: `User ${i}`,
            passwordHash: 'x'.repeat(20),
          })),
        )
        .returning()
      const userIds = userRows.map((row) => row.id)
      const base = Date.UTC(2026, 0, 1)
      const rows = Array.from({ length: count }, (_, i) => ({
        title: i % 2 === 0 ? `Kiln post ${seeded + i}` : `Other 100% post_${seeded + i}`,
        body: i % 3 === 0 ? 'about pottery and clay' : 'something else entirely',
        published: i % 2 === 0,
        tokenCount: (i * 7) % 5,
        authorId: userIds[i % userIds.length]!,
        createdAt: new Date(base + Math.floor(i / 2) * 86_400_000),
        ...(backend.dialect === 'sqlite'
          ? { publishedAt: i % 4 === 0 ? null : new Date(base + i * 1000) }
          : {}),
      }))
      for (let i = 0; i < rows.length; i += 500) {
        await anyDb
          .insert(posts)
          .values(rows.slice(i, i + 500))
          .returning()
      }
      seeded += count
      return { userIds }
    },
    close: () => test.cleanup(),
  }
}
