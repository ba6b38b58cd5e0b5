/**
 * The generated show route taken apart, to measure what each layer costs: one process, one
 * Drizzle pool, one port per variant (the runner reads this process's CPU per burst, and only
 * one variant is loaded at a time):
 *
 * - `hono`: Hono on @hono/node-server, `pool.query` like the floor, `c.json` — the framework;
 * - `controller`: the demo's generated posts controller alone (prepared Drizzle query,
 *   resource, envelope) — no auth, no limiter (a fixed key is set, so its scope check passes);
 * - `auth`: the controller behind `apiKeyAuth`;
 * - `throttle`: the controller behind `throttle(limiters, 'api')` (memory);
 * - `cache`: the controller behind `privateCache()` (which builds the group's JSON answers);
 * - `stages`: behind `privateCache`, the two-stage limiter around `apiKeyAuth`, and `bodyLimit`
 *   (the five middlewares the generated group used before `apiGuard`);
 * - `guard`: behind `apiGuard`, which does what those five do in one middleware;
 * - `full`: `apiRoutes` as the demo mounts it (`apiGuard`, as in bench/servers/rest-kiln.ts).
 *
 * Run by the benchmarks with `startServer`; DATABASE_URL and KILN_BENCH_POOL (default 10).
 */
import { Hono, type MiddlewareHandler } from 'hono'
import pg from 'pg'
import { apiRoutes, postsController } from '../../examples/demo/src/api/index.ts'
import { hashPassword } from '../../examples/demo/src/auth.ts'
import {
  type ApiEnv,
  apiGuard,
  apiKeyAuth,
  createDatabaseApiKeyProvider,
  createRealtime,
  createRecordCounter,
  privateCache,
  twoStageThrottle,
} from '../../src/api/index.ts'
import { bodyLimit } from '../../src/core/http/body-limit.ts'
import { createRateLimiters } from '../../src/core/http/rate-limiters.ts'
import { throttle } from '../../src/core/http/throttle.ts'
import { errorHandler, silentLogger } from '../../src/core/index.ts'
import { createDatabase } from '../../src/db/index.ts'
import { serveFetch, serverReady } from '../http/index.ts'

const logger = silentLogger()
const poolMax = Number(process.env.KILN_BENCH_POOL ?? 10)
const database = await createDatabase(process.env.DATABASE_URL ?? '', { poolMax })
if (database.dialect !== 'postgres') throw new TypeError('expected a Postgres database')
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: poolMax })
pool.on('error', () => {})
const limiters = createRateLimiters({ limiters: { api: { points: 1_000_000_000 } }, logger })
const apiKeys = createDatabaseApiKeyProvider({ database, logger })
const context = {
  db: database.db,
  counts: createRecordCounter(),
  realtime: createRealtime(),
  hashPassword,
}

/** Stands in for `apiKeyAuth` where a layer leaves it out: the controller checks scopes. */
const fixedKey: MiddlewareHandler<ApiEnv> = async (c, next) => {
  c.set('apiKey', { id: 0, name: 'bench', scopes: ['*'] })
  await next()
}

const app = (build: (root: Hono) => void) => {
  const root = new Hono()
  root.onError(errorHandler({ logger }))
  build(root)
  return serveFetch(root.fetch)
}
const ports = {
  hono: await app((root) =>
    root.get('/api/v1/posts/:id', async (c) => {
      const { rows } = await pool.query('select * from posts where id = $1', [
        Number(c.req.param('id')),
      ])
      return c.json({ data: rows[0] })
    }),
  ),
  controller: await app((root) =>
    root.route(
      '/api/v1/posts',
      new Hono<ApiEnv>().use(fixedKey).route('/', postsController(context)),
    ),
  ),
  auth: await app((root) =>
    root.route(
      '/api/v1/posts',
      new Hono().use(apiKeyAuth({ provider: apiKeys })).route('/', postsController(context)),
    ),
  ),
  throttle: await app((root) =>
    root.route(
      '/api/v1/posts',
      new Hono<ApiEnv>()
        .use(fixedKey)
        .use(throttle(limiters, 'api'))
        .route('/', postsController(context)),
    ),
  ),
  cache: await app((root) =>
    root.route(
      '/api/v1/posts',
      new Hono<ApiEnv>().use(fixedKey).use(privateCache()).route('/', postsController(context)),
    ),
  ),
  stages: await app((root) => {
    const limit = twoStageThrottle(limiters, 'api')
    root.route(
      '/api/v1/posts',
      new Hono<ApiEnv>()
        .use(privateCache())
        .use(limit.beforeAuth)
        .use(apiKeyAuth({ provider: apiKeys }))
        .use(limit.afterAuth)
        .use(bodyLimit())
        .route('/', postsController(context)),
    )
  }),
  guard: await app((root) =>
    root.route(
      '/api/v1/posts',
      new Hono<ApiEnv>()
        .use(apiGuard({ apiKeys, limiters, limiter: 'api', logger }))
        .route('/', postsController(context)),
    ),
  ),
  full: await app((root) =>
    root.route('/', apiRoutes({ database, apiKeys, limiters, ...context })),
  ),
}

serverReady(ports, async () => {
  await apiKeys.close()
  await pool.end()
  await database.close()
})
