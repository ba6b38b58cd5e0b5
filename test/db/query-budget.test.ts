import { request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { sql } from 'drizzle-orm'
import { pgTable, serial, text } from 'drizzle-orm/pg-core'
import { Hono } from 'hono'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createRecordCounter,
  defineListQuery,
  runAggregateQuery,
  runListQuery,
} from '../../src/api/index.ts'
import { planListQuery } from '../../src/api/query/plan.ts'
import { pageMayBeSlow } from '../../src/api/query/run.ts'
import { createLogger, errorHandler } from '../../src/core/index.ts'
import {
  createDatabase,
  createModelRegistry,
  type Database,
  type PostgresDatabase,
  QueryCancelledError,
} from '../../src/db/index.ts'
import { createDataTools, createMcpServer } from '../../src/mcp/index.ts'
import { call, connectInMemory } from '../mcp/support/client.ts'
import {
  createPostgresTestDatabase,
  describeEachDatabase,
  throughPgBouncer,
} from '../support/databases.ts'
import { postgresUrl } from '../support/env.ts'

/**
 * The query budget (issue: a read-only key's 500-character `contains` filter over 25 rows of
 * 1 MiB ran 18-20 s and kept running after the client hung up). Each budgeted query runs on a
 * pooled connection with `SET LOCAL statement_timeout`, and is cancelled when the request's
 * signal aborts: directly on PostgreSQL and through PgBouncer in transaction mode.
 */

const docs = pgTable('budget_docs', {
  id: serial('id').primaryKey(),
  body: text('body').notNull(),
})
const docsQuery = defineListQuery(docs, { fields: ['id', 'body'], filter: ['id', 'body'] })

/** No 500-character needle matches in a MiB of `a`s: each row is searched to its end. */
const NEEDLE = `${'a'.repeat(499)}b`
const SLOW_PATH = `/docs?fields=id&filter[body][contains]=${NEEDLE}`
const BUDGET_MS = 600

describeEachDatabase(
  'the query budget on list queries',
  (backend) => {
    let database: Database
    let admin: pg.Client
    let drop: () => Promise<void>
    let url: string
    let directUrl: string
    const lines: string[] = []
    const app = new Hono()

    beforeAll(async () => {
      const created = await createPostgresTestDatabase()
      drop = created.drop
      directUrl = created.url
      url = backend.name === 'pgbouncer' ? throughPgBouncer(created.url) : created.url
      database = await createDatabase(url, {
        poolMax: 4,
        statementTimeoutMs: BUDGET_MS,
        // The server's cancel is under test, not the client's own wait for an answer: on a
        // loaded machine the cancel's answer may come later than the default margin.
        queryTimeoutMs: BUDGET_MS + 10_000,
        logger: { info: () => {} },
      })
      admin = new pg.Client({ connectionString: directUrl })
      await admin.connect()
      await admin.query('create table budget_docs (id serial primary key, body text not null)')
      // 25 rows of 1 MiB, stored uncompressed as the were (a MiB of one letter would
      // otherwise compress to a few KiB).
      await admin.query('alter table budget_docs alter column body set storage external')
      await admin.query(
        `insert into budget_docs (body) select repeat('a', 1048576) from generate_series(1, 25)`,
      )
      const logger = createLogger({
        level: 'debug',
        destination: { write: (line: string) => void lines.push(line) },
      })
      const counts = createRecordCounter()
      app.onError(errorHandler({ logger }))
      app.get('/docs', async (c) =>
        c.json(
          await runListQuery(docsQuery, c.req.url, {
            db: database.db,
            counts,
            signal: c.req.raw.signal,
          }),
        ),
      )
      app.get('/docs/aggregate', async (c) =>
        c.json(
          await runAggregateQuery(docsQuery, c.req.url, {
            db: database.db,
            signal: c.req.raw.signal,
          }),
        ),
      )
    }, 60_000)

    afterAll(async () => {
      await database?.close()
      await admin?.end()
      await drop?.()
    })

    /** The server's running queries on the test table (this database's backends). */
    const running = async () => {
      const { rows } = await admin.query<{ pid: number }>(
        `select pid from pg_stat_activity
          where datname = current_database() and state = 'active'
            and query like '%budget_docs%' and pid <> pg_backend_pid()`,
      )
      return rows.length
    }

    /** Connections left inside a transaction: a budgeted query must end its own. */
    const leftInTransaction = async () => {
      const { rows } = await admin.query(
        `select pid from pg_stat_activity
          where datname = current_database() and state like 'idle in transaction%'`,
      )
      return rows.length
    }

    it('an aggregate over the same filter keeps the same budget: 503, its shape logged, no value', async () => {
      lines.length = 0
      const response = await app.request(`/docs/aggregate?count=*&filter[body][contains]=${NEEDLE}`)
      expect(response.status).toBe(503)
      const body = (await response.json()) as { error: string }
      expect(body).toEqual({
        error: expect.stringContaining(`${BUDGET_MS} ms budget`),
        code: 'query_timeout',
      })
      const entry = lines
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .find((line) => line.code === 'query_timeout')
      expect(entry, lines.join('\n')).toBeDefined()
      const text = JSON.stringify(entry)
      expect(text).toContain('budget_docs aggregate')
      expect(text).toContain('body.contains')
      expect(text).not.toContain('aaaa')
      expect(await running()).toBe(0)
      expect(await leftInTransaction()).toBe(0)
    }, 30_000)

    it('answers 503 with a JSON error by the budget, and logs the query shape without its values', async () => {
      lines.length = 0
      const started = performance.now()
      const response = await app.request(SLOW_PATH)
      const elapsed = performance.now() - started
      expect(response.status).toBe(503)
      const body = (await response.json()) as { error: string }
      expect(body).toEqual({
        error: expect.stringContaining(`${BUDGET_MS} ms budget`),
        code: 'query_timeout',
      })
      expect(JSON.stringify(body)).not.toContain('aaaa')
      // The server cancelled it at the budget (plus a connection, a few round trips, and the
      // slack a loaded machine needs), not after the scan's tens of seconds.
      expect(elapsed).toBeGreaterThanOrEqual(BUDGET_MS - 50)
      expect(elapsed).toBeLessThan(BUDGET_MS + 5_000)
      const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
      const entry = logged.find((line) => line.code === 'query_timeout')
      expect(entry, lines.join('\n')).toBeDefined()
      const text = JSON.stringify(entry)
      expect(text).toContain('budget_docs')
      expect(text).toContain('body.contains.1')
      expect(text).not.toContain('aaaa')
      expect(await running()).toBe(0)
      expect(await leftInTransaction()).toBe(0)
      // The pooled connections are all usable again.
      const fast = await app.request('/docs?fields=id&per_page=5')
      expect(fast.status).toBe(200)
      expect(((await fast.json()) as { data: unknown[] }).data).toHaveLength(5)
    }, 30_000)

    it('crud_list keeps the same budget: a tool error naming it, the shape logged, the query ended', async () => {
      const logged: string[] = []
      const tools = createDataTools({
        database,
        models: createModelRegistry({ docs }, 'postgres'),
        access: { unlisted: 'read' },
        logger: createLogger({ destination: { write: (line: string) => void logged.push(line) } }),
      })
      const client = await connectInMemory(createMcpServer({ dataTools: { tools } }))
      try {
        const started = performance.now()
        const outcome = await call(client, 'crud_list', {
          model: 'budget_docs',
          fields: ['id'],
          filters: { body: { contains: NEEDLE } },
        })
        expect(performance.now() - started).toBeLessThan(BUDGET_MS + 5_000)
        expect(outcome.isError).toBe(true)
        expect(outcome.text).toContain(`${BUDGET_MS} ms budget`)
        expect(outcome.text).not.toContain('aaaa')
        const entry = logged.find((line) => line.includes('query_timeout'))
        expect(entry, logged.join('\n')).toContain('body.contains.1')
        expect(entry).not.toContain('aaaa')
        expect(await running()).toBe(0)
      } finally {
        await client.close()
      }
    }, 30_000)

    /**
     * `hangUps` slow pages on a pool of 2, their clients gone at once: each query leaves the
     * server within 15 s (its budget is 60 s: only the hang-up can end it this soon; the margin
     * is for a loaded machine, where the cancel's own connection is slow to open), no
     * transaction is left open, and the pool answers again.
     */
    async function hangUpsEndTheirQueries(hangUps: number, pipelineConnections?: number) {
      const patient = await createDatabase(url, {
        poolMax: 2,
        pipelineConnections,
        statementTimeoutMs: 60_000,
        logger: { info: () => {} },
      })
      const counts = createRecordCounter()
      const slowApp = new Hono()
      slowApp.onError(errorHandler({ logger: createLogger({ level: 'silent' }) }))
      slowApp.get('/docs', async (c) =>
        c.json(
          await runListQuery(docsQuery, c.req.url, {
            db: patient.db,
            counts,
            signal: c.req.raw.signal,
          }),
        ),
      )
      const slowServer = serve({ fetch: slowApp.fetch, hostname: '127.0.0.1', port: 0 })
      await new Promise((resolve) => slowServer.once('listening', resolve))
      try {
        const slowPort = (slowServer.address() as AddressInfo).port
        const requests = Array.from({ length: hangUps }, () => {
          const req = request({ host: '127.0.0.1', port: slowPort, path: encodeURI(SLOW_PATH) })
          req.on('error', () => {})
          req.end()
          return req
        })
        await until(async () => (await running()) === hangUps, 5_000)
        const hungUp = performance.now()
        for (const req of requests) req.destroy()
        await until(async () => (await running()) === 0, 15_000)
        expect(performance.now() - hungUp).toBeLessThan(15_000)
        await until(async () => (await leftInTransaction()) === 0, 1_000)
        // The connections they ran on answer again.
        const after = await slowApp.request('/docs?fields=id&per_page=2')
        expect(after.status).toBe(200)
      } finally {
        await new Promise((resolve) => slowServer.close(resolve))
        await patient.close()
      }
    }

    it('cancels the query on the server when the client hangs up', async () => {
      await hangUpsEndTheirQueries(1)
    }, 30_000)

    it('cancels on a connection of its own: hang-ups that hold every pooled connection', async () => {
      // Two slow pages hold both pooled connections; neither cancel may wait for a third.
      await hangUpsEndTheirQueries(2, 0)
    }, 30_000)
  },
  { only: ['postgres'] },
)

async function until(check: () => Promise<boolean>, withinMs: number): Promise<void> {
  const deadline = performance.now() + withinMs
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`not within ${withinMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

describe.skipIf(!postgresUrl)('slow list pages off the pipelined connections [postgres]', () => {
  it('a slow page holds up none of the fast pages sent right behind it', async () => {
    const created = await createPostgresTestDatabase()
    const database = (await createDatabase(created.url, {
      poolMax: 4,
      pipelineConnections: 2,
      statementTimeoutMs: 8_000,
    })) as PostgresDatabase
    try {
      await database.db.execute(
        sql.raw(`create table budget_docs (id serial primary key, body text not null);
            alter table budget_docs alter column body set storage external;
            insert into budget_docs (body) select repeat('a', 1048576) from generate_series(1, 25)`),
      )
      await Promise.all([database.ping(), database.ping()]) // both pipelined connections up
      const counts = createRecordCounter()
      const list = (path: string) =>
        runListQuery(docsQuery, `http://localhost${path}`, { db: database.db, counts })
      await list('/docs?fields=id&per_page=2') // the count cached, as on a warm server
      const started = performance.now()
      const slow = list(SLOW_PATH).then(
        () => 'answered',
        (error: Error) => error.constructor.name,
      )
      const fast = await Promise.all(
        Array.from({ length: 12 }, () =>
          list('/docs?fields=id&per_page=2').then(() => performance.now() - started),
        ),
      )
      // Pipelined behind the scan, they would have waited for it (seconds): they did not.
      expect(Math.max(...fast)).toBeLessThan(3_000)
      expect(await slow).toBe('QueryTimeoutError')
    } finally {
      await database.close()
      await created.drop()
    }
  }, 30_000)
})

it('pageMayBeSlow: a first or cursor page in key order stays fast; filters, searches, other orders and deep offsets do not', () => {
  const plan = (query: string) => planListQuery(docsQuery, new URLSearchParams(query), {})
  const slow = (query: string, scoped = false) => pageMayBeSlow(docsQuery, plan(query), scoped)
  expect(slow('')).toBe(false)
  expect(slow('page=2&per_page=100')).toBe(false)
  expect(slow('cursor=')).toBe(false)
  expect(slow('sort=-id')).toBe(false)
  expect(slow('sort=body')).toBe(true)
  expect(slow('filter[id]=3')).toBe(true)
  expect(slow('page=51&per_page=20')).toBe(true)
  expect(slow('', true)).toBe(true)
})

describeEachDatabase(
  'the query budget where a statement cannot be stopped',
  (backend) => {
    it('runs no query for a request whose client is already gone', async () => {
      const test = await backend.create()
      try {
        const abandoned = new AbortController()
        abandoned.abort()
        const run = runListQuery(docsQuery, 'http://localhost/docs?filter[id]=1', {
          db: test.database.db,
          counts: createRecordCounter(),
          signal: abandoned.signal,
        })
        // The table does not even exist: the request ends before any statement is sent.
        await expect(run).rejects.toBeInstanceOf(QueryCancelledError)
      } finally {
        await test.cleanup()
      }
    })
  },
  { only: ['sqlite', 'pglite'] },
)
