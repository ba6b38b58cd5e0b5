/**
 * What API-key auth and rate limiting cost end to end: GET one record through `apiKeyAuth`
 * and the `api` limiter (limit raised so nothing is refused) against the same Hono route with
 * neither, on Postgres, both served by @hono/node-server in this process and driven by the
 * same keep-alive HTTP client in alternating rounds. Plus `verifyKey` in process, answered
 * from the verification cache and from the database.
 * Needs PostgreSQL: KILN_BENCH_DATABASE_URL, KILN_TEST_DATABASE_URL or DATABASE_URL (a
 * scratch database is created and dropped). Redis (KILN_TEST_REDIS_URL or REDIS_URL) adds a
 * row with the limiter on Redis.
 */
import { randomBytes } from 'node:crypto'
import { Agent, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { eq, sql } from 'drizzle-orm'
import type { NodePgDatabase } from 'drizzle-orm/node-postgres'
import { bigserial, pgTable, text } from 'drizzle-orm/pg-core'
import { type Context, Hono } from 'hono'
import {
  apiKeyAuth,
  createApiKey,
  createDatabaseApiKeyProvider,
  createRateLimiters,
  type RateLimiters,
  throttle,
} from 'kiln/api'
import { errorHandler, pingRedis, RedisConnections, silentLogger } from 'kiln/core'
import { createDatabase, migrate } from 'kiln/db'
import pg from 'pg'
import { type BenchOptions, type BenchResult, getJson, measure } from './lib.ts'

const ROWS = 10_000
const POOL = 10
const CONCURRENCY = 32
const UNLIMITED = { api: { points: 1_000_000_000 } }

const records = pgTable('bench_records', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  title: text('title').notNull(),
  body: text('body').notNull(),
})

export default async function run({ quick }: BenchOptions): Promise<BenchResult[]> {
  const adminUrl =
    process.env.KILN_BENCH_DATABASE_URL ||
    process.env.KILN_TEST_DATABASE_URL ||
    process.env.DATABASE_URL ||
    'postgres://postgres@127.0.0.1:5432/postgres'
  if (!/^postgres(ql)?:\/\//.test(adminUrl)) {
    throw new Error(
      'bench api-keys needs a postgres:// URL (KILN_TEST_DATABASE_URL or DATABASE_URL)',
    )
  }
  const redisUrl = process.env.KILN_TEST_REDIS_URL || process.env.REDIS_URL || undefined
  const name = `kiln_bench_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE "${name}"`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  const database = await createDatabase(url.toString(), { poolMax: POOL })
  if (database.dialect !== 'postgres') throw new TypeError('expected a Postgres database')
  const redis = redisUrl ? new RedisConnections(redisUrl) : undefined
  let server: Server | undefined
  const providers: { close(): Promise<void> }[] = []
  try {
    await migrate(database, { logger: { info: () => {}, warn: () => {} } })
    const db = database.db as NodePgDatabase
    await db.execute(
      sql.raw(
        'CREATE TABLE bench_records (id bigserial PRIMARY KEY, title text NOT NULL, body text NOT NULL)',
      ),
    )
    await db.execute(
      sql.raw(
        `INSERT INTO bench_records (title, body) SELECT 'Record ' || n, repeat('lorem ipsum ', 20) FROM generate_series(1, ${ROWS}) AS n`,
      ),
    )
    const { rawKey } = await createApiKey(database, { name: 'bench', scopes: ['*'] })
    const cached = createDatabaseApiKeyProvider({ database, logger: silentLogger() })
    const uncached = createDatabaseApiKeyProvider({
      database,
      logger: silentLogger(),
      cacheTtlMs: 0,
    })
    providers.push(cached, uncached)
    await waitFor(() => cached.status().changeFeed === 'live')

    const show = async (c: Context) => {
      const [row] = await db
        .select()
        .from(records)
        .where(eq(records.id, Number(c.req.param('id'))))
      return row ? c.json({ data: row }) : c.json({ error: 'Not Found' }, 404)
    }
    const memoryLimiters = createRateLimiters({ limiters: UNLIMITED })
    let redisLimiters: RateLimiters | undefined
    if (redis) {
      const client = redis.connect({ name: 'bench-limiter' })
      await pingRedis(client, redis.url)
      redisLimiters = createRateLimiters({ redis: client, prefix: name, limiters: UNLIMITED })
    }
    const fixed = (c: Context) =>
      c.json({ data: { id: Number(c.req.param('id')), title: 'Record' } })
    const app = new Hono()
    app.onError(errorHandler({ logger: silentLogger() }))
    app.get('/plain/records/:id', show)
    app.get('/plain-fixed/records/:id', fixed)
    app.get(
      '/auth-fixed/records/:id',
      throttle(memoryLimiters, 'api'),
      apiKeyAuth({ provider: cached }),
      fixed,
    )
    app.get(
      '/auth/records/:id',
      throttle(memoryLimiters, 'api'),
      apiKeyAuth({ provider: cached }),
      show,
    )
    app.get(
      '/uncached/records/:id',
      throttle(memoryLimiters, 'api'),
      apiKeyAuth({ provider: uncached }),
      show,
    )
    if (redisLimiters) {
      app.get(
        '/redis/records/:id',
        throttle(redisLimiters, 'api'),
        apiKeyAuth({ provider: cached }),
        show,
      )
    }
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server
    const listening = server
    await new Promise((resolve) =>
      listening.listening ? resolve(null) : listening.once('listening', resolve),
    )
    const port = (server.address() as AddressInfo).port
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY })
    // Both sides send the same header; only one of them reads it.
    const headers = { authorization: `Bearer ${rawKey}` }
    const randomId = () => 1 + Math.floor(Math.random() * ROWS)
    const get = (prefix: string) => () =>
      getJson(agent, port, `/${prefix}/records/${randomId()}`, headers)
    const settings = quick
      ? { rounds: 2, durationMs: 500, concurrency: CONCURRENCY }
      : { rounds: 10, durationMs: 2_000, concurrency: CONCURRENCY }
    const http = `${ROWS.toLocaleString('en-US')} rows, ${CONCURRENCY} concurrent keep-alive requests from this process, pool ${POOL}`

    // JIT, sockets and pool connections warm before anything is timed.
    for (const path of ['plain', 'auth', 'uncached', 'plain-fixed', 'auth-fixed']) {
      await measure(get(path), quick ? 300 : 1_500, CONCURRENCY)
    }
    const results: BenchResult[] = []
    const cases: [string, string, string][] = [
      ['GET one record + apiKeyAuth + api limiter (memory)', 'auth', 'verification cache on'],
      [
        'GET one record + apiKeyAuth (no cache) + api limiter',
        'uncached',
        'cacheTtlMs: 0: a prefix query per request',
      ],
    ]
    if (redisLimiters) {
      cases.push([
        'GET one record + apiKeyAuth + api limiter (Redis)',
        'redis',
        'one Redis round trip per request for the limiter',
      ])
    }
    for (const [label, prefix, note] of cases) {
      await get(prefix)()
      const { cpu, ...measured } = await compareWithCpu(get(prefix), get('plain'), settings)
      results.push({
        name: label,
        baseline: 'same route, no auth, no limiter',
        ...measured,
        notes: `${http}; ${note}; CPU of this process per request ${cpu}`,
      })
    }
    {
      // The fixed cost of the two middlewares, without a database query to hide behind.
      const { cpu, ...measured } = await compareWithCpu(
        get('auth-fixed'),
        get('plain-fixed'),
        settings,
      )
      results.push({
        name: 'GET fixed JSON (no query) + apiKeyAuth + api limiter (memory)',
        baseline: 'same route, no auth, no limiter',
        ...measured,
        notes: `${CONCURRENCY} concurrent keep-alive requests from this process; CPU of this process per request ${cpu}`,
      })
    }
    agent.destroy()

    const verify = quick
      ? { rounds: 2, durationMs: 300, concurrency: POOL }
      : { rounds: 6, durationMs: 1_000, concurrency: POOL }
    const { cpu: _cpu, ...measured } = await compareWithCpu(
      () => cached.verifyKey(rawKey),
      () => uncached.verifyKey(rawKey),
      verify,
    )
    results.push({
      name: 'verifyKey, cached',
      baseline: 'verifyKey, uncached (prefix query, warm pool)',
      ...measured,
      notes: `in process, ${POOL} concurrent callers, pool ${POOL}`,
    })
    return results
  } finally {
    if (server) {
      const closing = server
      await new Promise((resolve) => closing.close(() => resolve(null)))
    }
    for (const provider of providers) await provider.close()
    await redis?.close()
    await database.close()
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
    await admin.end()
  }
}

/**
 * `compare` from lib.ts (alternating rounds, warm-up first), also summing this process's CPU
 * time per operation on each side: on a shared, busy machine that is steadier than wall time.
 */
async function compareWithCpu(
  subject: () => Promise<unknown>,
  baseline: () => Promise<unknown>,
  options: { rounds: number; durationMs: number; concurrency: number },
): Promise<{ ops: number; baselineOps: number; ratio: number; cpu: string }> {
  interface Side {
    fn: () => Promise<unknown>
    count: number
    ms: number
    cpuUs: number
  }
  const s: Side = { fn: subject, count: 0, ms: 0, cpuUs: 0 }
  const b: Side = { fn: baseline, count: 0, ms: 0, cpuUs: 0 }
  const sides = [s, b]
  for (const side of sides)
    await measure(side.fn, Math.min(300, options.durationMs), options.concurrency)
  for (let round = 0; round < options.rounds; round++) {
    const order = round % 2 === 0 ? [s, b] : [b, s]
    for (const side of order) {
      const before = process.cpuUsage()
      const { count, ms } = await measure(side.fn, options.durationMs, options.concurrency)
      const used = process.cpuUsage(before)
      side.count += count
      side.ms += ms
      side.cpuUs += used.user + used.system
    }
  }
  const ops = (s.count / s.ms) * 1000
  const baselineOps = (b.count / b.ms) * 1000
  const sCpu = s.cpuUs / s.count
  const bCpu = b.cpuUs / b.count
  const cpu = `${Math.round(sCpu)} µs vs ${Math.round(bCpu)} µs (+${(((sCpu - bCpu) / bCpu) * 100).toFixed(1)}%)`
  return { ops, baselineOps, ratio: ops / baselineOps, cpu }
}

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 25))
  if (!condition()) throw new Error('the API key change feed did not connect')
}
