/**
 * The demo's generated REST API on PostgreSQL (DATABASE_URL) with its realtime core, its stream
 * limits raised so the benchmark's streams (all of one key, from one address) are not refused.
 * `GET /bench/stats` (outside the API) answers the open streams and the memory after a full
 * collection (the process runs with --expose-gc).
 */
import { Hono } from 'hono'
import { apiRoutes } from '../../examples/demo/src/api/index.ts'
import { hashPassword } from '../../examples/demo/src/auth.ts'
import {
  createDatabaseApiKeyProvider,
  createRealtime,
  createRecordCounter,
} from '../../src/api/index.ts'
import { createRateLimiters } from '../../src/core/http/rate-limiters.ts'
import { errorHandler, silentLogger } from '../../src/core/index.ts'
import { createDatabase } from '../../src/db/index.ts'
import { serveFetch, serverReady } from '../http/index.ts'

const logger = silentLogger()
const database = await createDatabase(process.env.DATABASE_URL ?? '', { poolMax: 10 })
const limiters = createRateLimiters({ limiters: { api: { points: 1_000_000_000 } }, logger })
const apiKeys = createDatabaseApiKeyProvider({ database, logger })
const realtime = createRealtime({
  apiKeys,
  logger,
  maxStreamsPerKey: 100_000,
  maxStreamsPerIp: 100_000,
})
const app = new Hono()
app.onError(errorHandler({ logger }))
app.get('/bench/stats', (c) => {
  ;(globalThis as { gc?: () => void }).gc?.()
  const { rss, heapUsed, external, arrayBuffers } = process.memoryUsage()
  return c.json({ streams: realtime.status().streams, rss, heapUsed, external, arrayBuffers })
})
app.route(
  '/',
  apiRoutes({ database, apiKeys, limiters, counts: createRecordCounter(), hashPassword, realtime }),
)

serverReady({ port: await serveFetch(app.fetch) }, async () => {
  await realtime.close()
  await apiKeys.close()
  await database.close()
})
