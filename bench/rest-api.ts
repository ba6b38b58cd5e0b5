/**
 * The generated REST API (the demo's `examples/demo/src/api`, API-key auth and the `api`
 * limiter on, limit raised) against a hand-written node:http + pg handler running the same
 * page query, on a 100,000-row Postgres table. Both servers run in this process, each with a
 * pool of the same size, driven by the same keep-alive HTTP client in alternating rounds.
 * Needs PostgreSQL: KILN_BENCH_DATABASE_URL, else KILN_TEST_DATABASE_URL, else
 * postgres://postgres@127.0.0.1:5432/postgres (a scratch database is created and dropped).
 */
import { randomBytes } from 'node:crypto'
import { Agent, createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import pg from 'pg'
import { apiRoutes } from '../examples/demo/src/api/index.ts'
import { hashPassword } from '../examples/demo/src/auth/passwords.ts'
import { createApiKey, createDatabaseApiKeyProvider, createRateLimiters } from '../src/api/index.ts'
import { errorHandler, silentLogger } from '../src/core/index.ts'
import { createDatabase, migrate } from '../src/db/index.ts'
import { type BenchOptions, type BenchResult, compare, getJson } from './lib.ts'

const ROWS = 100_000
const POOL = 10
const CONCURRENCY = 32

export default async function run({ quick }: BenchOptions): Promise<BenchResult[]> {
  const adminUrl =
    process.env.KILN_BENCH_DATABASE_URL ||
    process.env.KILN_TEST_DATABASE_URL ||
    'postgres://postgres@127.0.0.1:5432/postgres'
  const name = `kiln_bench_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE "${name}"`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  const database = await createDatabase(url.toString(), { poolMax: POOL })
  if (database.dialect !== 'postgres') throw new TypeError('expected a Postgres database')
  const pool = new pg.Pool({ connectionString: url.toString(), max: POOL })
  pool.on('error', () => {})
  const servers: Server[] = []
  try {
    await migrate(database, {
      appMigrationsDir: new URL('../examples/demo/migrations', import.meta.url).pathname,
    })
    await seed(pool)
    const { rawKey } = await createApiKey(database, { name: 'bench', scopes: ['*'] })
    const apiKeys = createDatabaseApiKeyProvider({ database, logger: silentLogger() })
    const limiters = createRateLimiters({ limiters: { api: { points: 1_000_000_000 } } })
    const app = new Hono()
    app.onError(errorHandler({ logger: silentLogger() }))
    app.route('/', apiRoutes({ database, apiKeys, limiters, hashPassword, logger: silentLogger() }))
    const kiln = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' })
    servers.push(kiln as Server)
    const raw = handWritten(pool)
    servers.push(raw)
    await Promise.all(
      servers.map((s) => new Promise((r) => (s.listening ? r(null) : s.once('listening', r)))),
    )
    const kilnPort = (kiln.address() as AddressInfo).port
    const rawPort = (raw.address() as AddressInfo).port
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY })
    const headers = { authorization: `Bearer ${rawKey}` }
    const get = (port: number, path: string) => getJson(agent, port, path, headers)
    const randomId = () => 1 + Math.floor(Math.random() * ROWS)
    const settings = quick
      ? { rounds: 2, durationMs: 500, concurrency: CONCURRENCY }
      : { rounds: 6, durationMs: 2_000, concurrency: CONCURRENCY }

    const cases: Array<[string, () => string, () => string]> = [
      ['GET /api/v1/posts/{id}', () => `/api/v1/posts/${randomId()}`, () => `/posts/${randomId()}`],
      [
        'GET /api/v1/posts?page=1&per_page=20',
        () => '/api/v1/posts?page=1&per_page=20',
        () => '/posts?page=1',
      ],
      [
        'GET /api/v1/posts?page=1000&per_page=20',
        () => '/api/v1/posts?page=1000&per_page=20',
        () => '/posts?page=1000',
      ],
    ]
    const results: BenchResult[] = []
    for (const [label, subjectPath, baselinePath] of cases) {
      // Both sides answer and agree before they are timed.
      const check = (await get(kilnPort, subjectPath())) as { data: unknown }
      if (!check.data) throw new Error(`${label}: unexpected answer ${JSON.stringify(check)}`)
      const measured = await compare(
        () => get(kilnPort, subjectPath()),
        () => get(rawPort, baselinePath()),
        settings,
      )
      results.push({
        name: label,
        baseline: 'node:http + pg, same query',
        ...measured,
        notes: `${ROWS.toLocaleString('en-US')} rows, ${CONCURRENCY} concurrent keep-alive requests, pool ${POOL}; kiln adds API-key auth, rate limiter, validation, resource conversion and the envelope's total (cached count)`,
      })
    }
    agent.destroy()
    await apiKeys.close()
    return results
  } finally {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(() => r(null)))))
    await pool.end()
    await database.close()
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
    await admin.end()
  }
}

async function seed(pool: pg.Pool): Promise<void> {
  await pool.query(
    `INSERT INTO users (email, name, password_hash) VALUES ('bench@example.com', 'Bench', 'x')`,
  )
  await pool.query(
    `INSERT INTO posts (title, body, published, token_count, author_id)
     SELECT 'Post ' || n, repeat('lorem ipsum ', 20), n % 2 = 0, n % 1000, 1
     FROM generate_series(1, ${ROWS}) AS n`,
  )
  await pool.query('ANALYZE posts')
}

/** The floor: parse the URL, run the query, write JSON. No auth, no limits, no validation. */
function handWritten(pool: pg.Pool): Server {
  const server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? '/', 'http://x')
      const one = /^\/posts\/(\d+)$/.exec(url.pathname)
      let body: unknown
      if (one) {
        const { rows } = await pool.query('select * from posts where id = $1', [Number(one[1])])
        body = { data: rows[0] }
      } else {
        const page = Number(url.searchParams.get('page') ?? 1)
        const { rows } = await pool.query('select * from posts order by id limit 20 offset $1', [
          (page - 1) * 20,
        ])
        body = { data: rows }
      }
      const json = JSON.stringify(body)
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(json),
      })
      res.end(json)
    } catch {
      res.writeHead(500).end()
    }
  })
  server.listen(0, '127.0.0.1')
  return server
}
