/**
 * The demo's generated REST API (`examples/demo/src/api`, as `kiln make:api --all` writes it)
 * on PostgreSQL, as one demo instance serves it: API-key auth and the `api` limiter, its limit
 * raised so nothing is refused. KILN_BENCH_LIMITER=redis counts the limit (and caches list
 * totals) in Redis (REDIS_URL), as the demo does with REDIS_URL set; the default is memory.
 *
 * Run by the benchmarks with `startServer`; DATABASE_URL, KILN_BENCH_POOL (default 10), and
 * KILN_BENCH_REDIS_PIPELINING=off for the Redis client without auto pipelining.
 */
import { Hono } from 'hono'
import { apiRoutes } from '../../examples/demo/src/api/index.ts'
import { hashPassword } from '../../examples/demo/src/auth.ts'
import {
  createDatabaseApiKeyProvider,
  createRateLimiters,
  createRecordCounter,
} from '../../src/api/index.ts'
import { createSharedState, errorHandler, silentLogger } from '../../src/core/index.ts'
import { createDatabase } from '../../src/db/index.ts'
import { serveFetch, serverReady } from '../http/index.ts'

const logger = silentLogger()
const database = await createDatabase(process.env.DATABASE_URL ?? '', {
  poolMax: Number(process.env.KILN_BENCH_POOL ?? 10),
})
if (database.dialect !== 'postgres') throw new TypeError('expected a Postgres database')
const redis = process.env.KILN_BENCH_LIMITER === 'redis'
const shared = redis
  ? await createSharedState({
      redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      prefix: `kiln-bench-${process.pid}:`,
      autoPipelining: process.env.KILN_BENCH_REDIS_PIPELINING !== 'off',
    })
  : undefined
const limiters = createRateLimiters({
  redis: shared?.client,
  limiters: { api: { points: 1_000_000_000 } },
  logger,
})
const counts = createRecordCounter(shared ? { store: shared.kv } : {})
const apiKeys = createDatabaseApiKeyProvider({ database, logger })
const app = new Hono()
app.onError(errorHandler({ logger }))
app.route('/', apiRoutes({ database, apiKeys, limiters, counts, hashPassword }))

serverReady({ port: await serveFetch(app.fetch) }, async () => {
  await apiKeys.close?.()
  await shared?.close()
  await database.close()
})
