import { fileURLToPath } from 'node:url'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiRoutes } from '../../../examples/demo/src/api/index.ts'
import { hashPassword } from '../../../examples/demo/src/auth.ts'
import {
  createApiKey,
  createDatabaseApiKeyProvider,
  createRecordCounter,
  type DatabaseApiKeyProvider,
} from '../../../src/api/index.ts'
import { createRateLimiters } from '../../../src/core/http/rate-limiters.ts'
import {
  errorHandler,
  ManualClock,
  MemoryKeyValueStore,
  silentLogger,
} from '../../../src/core/index.ts'
import { migrate, type PostgresDatabase } from '../../../src/db/index.ts'
import { describeEachDatabase, type TestDatabase } from '../../support/databases.ts'

/**
 * How fresh the list envelope's `total` is when rows change outside the API (SQL, other code):
 * the cached count is trusted for `ttlMs` (5 s by default) from the moment it was counted, and
 * not a moment longer; changes through the API and pages that are not full are exact at once.
 * The clock is injected, so nothing here waits or depends on timing.
 */
describeEachDatabase(
  'list total freshness for changes outside the API',
  (backend) => {
    const TTL = 5_000
    const clock = new ManualClock(1_000_000)
    let test: TestDatabase
    let apiKeys: DatabaseApiKeyProvider
    let app: Hono
    let auth: { authorization: string }

    beforeAll(async () => {
      test = await backend.create()
      await migrate(test.database, {
        appMigrationsDir: fileURLToPath(
          new URL('../../../examples/demo/migrations', import.meta.url),
        ),
      })
      apiKeys = createDatabaseApiKeyProvider({ database: test.database, logger: silentLogger() })
      const counts = createRecordCounter({ store: new MemoryKeyValueStore({ clock }), ttlMs: TTL })
      app = new Hono()
      app.onError(errorHandler({ logger: silentLogger() }))
      app.route(
        '/',
        apiRoutes({
          database: test.database as PostgresDatabase,
          apiKeys,
          limiters: createRateLimiters({ limiters: { api: { points: 1_000_000 } } }),
          counts,
          hashPassword,
        }),
      )
      auth = {
        authorization: `Bearer ${(await createApiKey(test.database, { name: 't', scopes: ['*'] })).rawKey}`,
      }
      await sql(`INSERT INTO users (email, name, password_hash) VALUES ('a@example.com', 'A', 'x')`)
      await insertPosts(30)
    })
    afterAll(async () => {
      await apiKeys?.close()
      await test?.cleanup()
    })

    async function sql(text: string): Promise<void> {
      const database = test.database as PostgresDatabase
      await database.db.execute(text)
    }
    async function insertPosts(n: number): Promise<void> {
      await sql(
        `INSERT INTO posts (title, body, author_id) SELECT 'p' || n, 'b', 1 FROM generate_series(1, ${n}) AS n`,
      )
    }
    async function total(perPage = 10): Promise<number> {
      const response = await app.request(`/api/v1/posts?page=1&per_page=${perPage}`, {
        headers: auth,
      })
      expect(response.status).toBe(200)
      return ((await response.json()) as { meta: { total: number } }).meta.total
    }

    it('a count is trusted for ttlMs after it was made, then counted again', async () => {
      expect(await total()).toBe(30) // counted now
      await insertPosts(5) // outside the API
      expect(await total()).toBe(30) // still the cached count
      clock.advance(TTL - 1)
      expect(await total()).toBe(30) // one millisecond before the TTL ends: still cached
      clock.advance(1)
      expect(await total()).toBe(35) // at the TTL: counted again
      await sql('DELETE FROM posts WHERE id IN (SELECT id FROM posts ORDER BY id DESC LIMIT 3)')
      expect(await total()).toBe(35)
      clock.advance(TTL)
      expect(await total()).toBe(32)
    })

    it('a page that is not full is exact at once, whatever is cached', async () => {
      expect(await total()).toBe(32) // cached
      await insertPosts(1)
      expect(await total()).toBe(32)
      expect(await total(100)).toBe(33) // the whole table fits on the page: no count needed
    })

    it('writes through the API show in the next response', async () => {
      clock.advance(TTL)
      const before = await total()
      const created = await app.request('/api/v1/posts', {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 't', body: 'b', author_id: 1 }),
      })
      expect(created.status).toBe(201)
      expect(await total()).toBe(before + 1)
    })
  },
  { only: ['pglite', 'postgres'] },
)

describe('the default freshness bound', () => {
  it('is 5 seconds', async () => {
    const clock = new ManualClock(0)
    const counts = createRecordCounter({ store: new MemoryKeyValueStore({ clock }) })
    const page = { page: 1, perPage: 10, offset: 0 }
    let rows = 100
    const count = async () => rows
    expect(await counts.total('t', page, 10, count)).toBe(100)
    rows = 200
    clock.advance(4_999)
    expect(await counts.total('t', page, 10, count)).toBe(100)
    clock.advance(1)
    expect(await counts.total('t', page, 10, count)).toBe(200)
  })
})
