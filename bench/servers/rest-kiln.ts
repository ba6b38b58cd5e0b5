/**
 * The demo's generated REST API (`examples/demo/src/api`, as `kilnjs make:api --all` writes it)
 * on PostgreSQL, as one demo instance serves it: API-key auth and the `api` limiter, its limit
 * raised so nothing is refused. KILN_BENCH_LIMITER=redis counts the limit (and caches list
 * totals) in Redis (REDIS_URL), as the demo does with REDIS_URL set; the default is memory.
 * KILN_BENCH_COUNT_TTL sets how long list totals are cached (ms; 0 counts on every request).
 * KILN_BENCH_COUNT_QUERIES=1 counts the statements sent to PostgreSQL (every `pool.query`,
 * i.e. every round trip) and answers the count at `GET /bench/queries`, outside the API.
 *
 * Run by the benchmarks with `startServer`; DATABASE_URL, KILN_BENCH_POOL (default 10) and
 * KILN_BENCH_PIPELINE (the connections one-off queries are pipelined over; default kiln's 4,
 * 0 for a pooled connection per query) and KILN_BENCH_SLOW_QUERIES (`slowQueryConcurrency`; default
 * kiln's).
 */
import { Hono } from 'hono'
import { apiRoutes } from '../../examples/demo/src/api/index.ts'
import { hashPassword } from '../../examples/demo/src/auth.ts'
import { createDatabaseApiKeyProvider, createRecordCounter } from '../../src/api/index.ts'
import { createRateLimiters } from '../../src/core/http/rate-limiters.ts'
import { createSharedState, errorHandler, silentLogger } from '../../src/core/index.ts'
import { postgresPool } from '../../src/db/database.ts'
import { createDatabase } from '../../src/db/index.ts'
import { serveFetch, serverReady } from '../http/index.ts'

const logger = silentLogger()
const pipeline = process.env.KILN_BENCH_PIPELINE
const slowQueries = process.env.KILN_BENCH_SLOW_QUERIES
const database = await createDatabase(process.env.DATABASE_URL ?? '', {
  poolMax: Number(process.env.KILN_BENCH_POOL ?? 10),
  ...(pipeline === undefined ? {} : { pipelineConnections: Number(pipeline) }),
  ...(slowQueries ? { slowQueryConcurrency: Number(slowQueries) } : {}),
})
if (database.dialect !== 'postgres') throw new TypeError('expected a Postgres database')
const redis = process.env.KILN_BENCH_LIMITER === 'redis'
const shared = redis
  ? await createSharedState({
      redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      prefix: `kiln-bench-${process.pid}:`,
    })
  : undefined
const limiters = createRateLimiters({
  redis: shared?.client,
  limiters: { api: { points: 1_000_000_000 } },
  logger,
})
const ttl = process.env.KILN_BENCH_COUNT_TTL
const counts = createRecordCounter({
  ...(shared ? { store: shared.kv } : {}),
  ...(ttl === undefined ? {} : { ttlMs: Number(ttl) }),
})
const apiKeys = createDatabaseApiKeyProvider({ database, logger })
const app = new Hono()
app.onError(errorHandler({ logger }))
if (process.env.KILN_BENCH_COUNT_QUERIES === '1') {
  const pool = postgresPool(database)
  if (!pool) throw new TypeError('expected a pg pool')
  let queries = 0
  const query = pool.query.bind(pool)
  pool.query = ((...args: Parameters<typeof query>) => {
    queries++
    return query(...args)
  }) as typeof pool.query
  app.get('/bench/queries', (c) => c.json({ queries }))
}
app.route('/', apiRoutes({ database, apiKeys, limiters, counts, hashPassword }))

serverReady({ port: await serveFetch(app.fetch) }, async () => {
  await apiKeys.close?.()
  await shared?.close()
  await database.close()
})
