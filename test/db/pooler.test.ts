import { sql } from 'drizzle-orm'
import { integer, pgTable, text } from 'drizzle-orm/pg-core'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createDemoContext } from '../../examples/demo/src/context.ts'
import { createApiKey, createDatabaseApiKeyProvider } from '../../src/api/index.ts'
import { postgresPool } from '../../src/db/database.ts'
import {
  createDatabase,
  type Database,
  migrate,
  type PostgresDatabase,
  postgresDb,
} from '../../src/db/index.ts'
import { pipelinedSockets } from '../../src/db/pipelined-queries.ts'
import { poolerOfUrl } from '../../src/db/pooler.ts'
import { captureLog } from '../api/support.ts'
import { mintKey } from '../faults/support.ts'
import { createPostgresTestDatabase } from '../support/databases.ts'
import { postgresUrl } from '../support/env.ts'
import { type RunningPgBouncer, startPgBouncer } from '../support/pgbouncer.ts'
import { startDemoProcess } from '../support/processes.ts'

describe('poolerOfUrl', () => {
  it('reads ?pooler= and hands pg the URL without it', () => {
    expect(poolerOfUrl('postgres://u:p@db:6432/app?pooler=transaction&sslmode=require')).toEqual({
      url: 'postgres://u:p@db:6432/app?sslmode=require',
      pooler: 'transaction',
      detected: false,
    })
    expect(poolerOfUrl('postgres://u@db/app?pooler=none').pooler).toBe('none')
    expect(poolerOfUrl('postgres://u@db/app')).toEqual({
      url: 'postgres://u@db/app',
      pooler: 'none',
      detected: false,
    })
  })

  it('recognises the hosted transaction poolers by address, and an explicit mode wins', () => {
    const supabase = 'postgres://u:p@aws-0-eu-west-1.pooler.supabase.com:6543/postgres'
    expect(poolerOfUrl(supabase)).toMatchObject({ pooler: 'transaction', detected: true })
    expect(poolerOfUrl(supabase.replace('6543', '5432')).pooler).toBe('none')
    const neon = 'postgres://u:p@ep-cool-darkness-123456-pooler.us-east-2.aws.neon.tech/neondb'
    expect(poolerOfUrl(neon)).toMatchObject({ pooler: 'transaction', detected: true })
    expect(poolerOfUrl(neon.replace('-pooler', '')).pooler).toBe('none')
    expect(poolerOfUrl(`${neon}?pooler=none`).pooler).toBe('none')
    expect(poolerOfUrl(neon, 'none').pooler).toBe('none')
  })

  it('refuses a mode it does not know, naming what it accepts', () => {
    expect(() => poolerOfUrl('postgres://u@db/app?pooler=session')).toThrow(
      /\?pooler= must be transaction or none \(got session\)/,
    )
    expect(() => poolerOfUrl('postgres://u@db/app', 'statement' as 'none')).toThrow(TypeError)
  })
})

const posts = pgTable('pooled_posts', { id: integer('id').primaryKey(), title: text('title') })

/**
 * Through Debian's PgBouncer 1.18 in transaction mode with a pool of 3 server connections:
 * concurrent clients get whichever server connection is free for each transaction.
 */
describe.skipIf(!postgresUrl)('createDatabase behind PgBouncer in transaction mode', () => {
  let bouncer: RunningPgBouncer
  let server: { url: string; drop(): Promise<void> }
  let pooledUrl: string
  const opened: Database[] = []

  beforeAll(async () => {
    server = await createPostgresTestDatabase()
    bouncer = await startPgBouncer({ serverUrl: postgresUrl ?? '', poolSize: 3 })
    pooledUrl = bouncer.urlFor(new URL(server.url).pathname.slice(1))
    const setup = new pg.Client({ connectionString: server.url })
    await setup.connect()
    await setup.query(`create table pooled_posts (id integer primary key, title text)`)
    await setup.query(
      `insert into pooled_posts select n, 'post ' || n from generate_series(1, 50) n`,
    )
    await setup.end()
  })
  afterAll(async () => {
    for (const database of opened) await database.close()
    await bouncer?.stop()
    await server?.drop()
  })

  async function open(url: string, options: Parameters<typeof createDatabase>[1] = {}) {
    const lines: string[] = []
    const database = (await createDatabase(url, {
      poolMax: 8,
      logger: { info: (line) => lines.push(line) },
      ...options,
    })) as PostgresDatabase
    opened.push(database)
    return { database, lines }
  }

  /** The generated show route's query: a named statement, run by many requests at once. */
  async function showConcurrently(database: PostgresDatabase): Promise<string[]> {
    const show = postgresDb(database)
      .select()
      .from(posts)
      .where(sql`${posts.id} = ${sql.placeholder('id')}`)
      .prepare('kiln_pooled_posts_show')
    const titles: string[] = []
    for (let round = 0; round < 10; round++) {
      const rows = await Promise.all(
        Array.from({ length: 20 }, (_, i) => show.execute({ id: ((round * 20 + i) % 50) + 1 })),
      )
      titles.push(...rows.map((found) => found[0]?.title ?? 'missing'))
    }
    return titles
  }

  it('runs named statements, transactions and one-off queries with ?pooler=transaction', async () => {
    const { database, lines } = await open(`${pooledUrl}?pooler=transaction`)
    const titles = await showConcurrently(database)
    expect(titles).toHaveLength(200)
    expect(titles.every((title) => /^post \d+$/.test(title))).toBe(true)
    const pool = postgresPool(database)
    expect(pool && pipelinedSockets(pool)).toEqual([])

    await postgresDb(database).transaction(async (tx) => {
      await tx.insert(posts).values({ id: 1001, title: 'in a transaction' })
      await tx.update(posts).set({ title: 'updated in it' }).where(sql`${posts.id} = 1001`)
    })
    const [row] = await postgresDb(database).select().from(posts).where(sql`${posts.id} = 1001`)
    expect(row?.title).toBe('updated in it')

    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(
      /transaction pooler \(pooler=transaction\): no named statements, no pipelines/,
    )
  })

  it('the pooler option says the same as the URL parameter', async () => {
    const { database, lines } = await open(pooledUrl, { pooler: 'transaction' })
    expect((await showConcurrently(database)).every((title) => title.startsWith('post '))).toBe(
      true,
    )
    expect(lines).toHaveLength(1)
  })

  it('says nothing when the database is reached directly', async () => {
    const { lines } = await open(server.url)
    expect(lines).toEqual([])
  })

  it('migrates from two instances at once through the pooler, leaving no lock behind', async () => {
    const [first, second] = await Promise.all([
      open(`${pooledUrl}?pooler=transaction`),
      open(`${pooledUrl}?pooler=transaction`),
    ])
    const runs = await Promise.all([migrate(first.database), migrate(second.database)])
    const applied = runs.flatMap((run) => run.applied)
    expect(applied.length).toBeGreaterThan(0)
    expect(new Set(applied).size).toBe(applied.length)
    expect((await migrate(first.database)).applied).toEqual([])

    const direct = new pg.Client({ connectionString: server.url })
    await direct.connect()
    const { rows } = await direct.query(
      // pg_locks spans the cluster: other suites migrate their own databases meanwhile.
      `select count(*)::int as n from pg_locks l join pg_database d on d.oid = l.database
        where l.locktype = 'advisory' and d.datname = current_database()`,
    )
    await direct.end()
    expect(rows[0].n).toBe(0)
  })

  /** Runs SQL on the server itself, as someone at a psql prompt would. */
  async function directSql(text: string): Promise<void> {
    const client = new pg.Client({ connectionString: server.url })
    await client.connect()
    await client.query(text)
    await client.end()
  }

  it('API keys: the change feed LISTENs on the direct URL and hears a revocation there', async () => {
    const { database, lines } = await open(`${pooledUrl}?pooler=transaction`, {
      directUrl: server.url,
    })
    expect(lines[0]).toMatch(/change feed listens on the direct URL/)
    await migrate(database, { logger: { info: () => {}, warn: () => {} } })
    const provider = createDatabaseApiKeyProvider({ database, cacheTtlMs: 60_000 })
    try {
      await vi.waitFor(() => expect(provider.status().changeFeed).toBe('live'))
      const key = await createApiKey(database, { name: 'listened' })
      await provider.verifyKey(key.rawKey)
      expect(provider.status().cacheEntries).toBe(1)
      await directSql(`UPDATE api_keys SET revoked_at = now() WHERE id = ${key.record.id}`)
      await vi.waitFor(() => expect(provider.status().cacheEntries).toBe(0))
      await expect(provider.verifyKey(key.rawKey)).rejects.toMatchObject({ reason: 'revoked' })
    } finally {
      await provider.close()
    }
  })

  it('API keys: without a direct URL nothing is cached, so a revocation holds at once', async () => {
    const { database, lines } = await open(`${pooledUrl}?pooler=transaction`)
    expect(lines[0]).toMatch(/API keys verified on every request/)
    await migrate(database, { logger: { info: () => {}, warn: () => {} } })
    const provider = createDatabaseApiKeyProvider({ database, cacheTtlMs: 60_000 })
    try {
      const key = await createApiKey(database, { name: 'unlistened' })
      for (let i = 0; i < 5; i++) await provider.verifyKey(key.rawKey)
      expect(provider.status()).toEqual({ cacheEntries: 0, changeFeed: 'down' })
      await directSql(`UPDATE api_keys SET revoked_at = now() WHERE id = ${key.record.id}`)
      await expect(provider.verifyKey(key.rawKey)).rejects.toMatchObject({ reason: 'revoked' })
    } finally {
      await provider.close()
    }
  })

  it('the demo reads DATABASE_DIRECT_URL: its API-key change feed listens there (issue #39)', async () => {
    const demoDatabase = await createPostgresTestDatabase()
    const name = new URL(demoDatabase.url).pathname.slice(1)
    const log = captureLog()
    const ctx = await createDemoContext({
      databaseUrl: `${bouncer.urlFor(name)}?pooler=transaction`,
      logger: log.logger,
      env: { DATABASE_DIRECT_URL: demoDatabase.url, DEMO_PASSWORD: 'pooled demo password' },
    })
    try {
      const said = log.text().match(/through a transaction pooler[^"]*/g) ?? []
      expect(said).toHaveLength(1)
      expect(said[0]).toContain('the API-key change feed listens on the direct URL')
    } finally {
      await ctx.close()
      await demoDatabase.drop()
    }
  })

  it('serves the demo: 200 concurrent shows through the pooler, all answered 200', async () => {
    const demoDatabase = await createPostgresTestDatabase()
    const name = new URL(demoDatabase.url).pathname.slice(1)
    const demo = await startDemoProcess({
      DATABASE_URL: `${bouncer.urlFor(name)}?pooler=transaction`,
      TRUST_PROXY: 'true',
      // The pooler line is told once at info, through the app's logger.
      LOG_LEVEL: 'info',
    })
    const pool = new pg.Pool({ connectionString: demoDatabase.url, max: 1 })
    try {
      const key = await mintKey(pool)
      await pool.query(
        `insert into posts (title, body, author_id)
         select 'post ' || n, 'body', (select min(id) from users) from generate_series(1, 20) n`,
      )
      const statuses: number[] = []
      for (let round = 0; round < 10; round++) {
        const answers = await Promise.all(
          Array.from({ length: 20 }, async (_, i) => {
            const response = await fetch(`${demo.url}/api/v1/posts/${i + 1}`, {
              // One client address per request: the per-IP limit stays out of the way.
              headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': `10.0.${round}.${i}` },
            })
            await response.arrayBuffer()
            return response.status
          }),
        )
        statuses.push(...answers)
      }
      expect(statuses.filter((status) => status !== 200)).toEqual([])
      expect(demo.output()).not.toMatch(/prepared statement/)
      expect(demo.output().match(/through a transaction pooler/g)).toHaveLength(1)
    } finally {
      await demo.stop()
      await pool.end()
      await demoDatabase.drop()
    }
  })
})
