/**
 * `crud_list` over the MCP endpoint (Streamable HTTP, stateless, bearer-token auth) against the
 * generated REST API's list endpoint (API-key auth, `api` limiter with its limit raised) for the
 * same page of the demo's `posts`, both served by one Hono app in this process and driven by the
 * same keep-alive HTTP client in alternating rounds. The REST side runs twice: counting the
 * total on every request like `crud_list` does, and with its default cached count.
 * Needs PostgreSQL: KILN_BENCH_DATABASE_URL, else KILN_TEST_DATABASE_URL, else
 * postgres://postgres@127.0.0.1:5432/postgres (a scratch database is created and dropped).
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { Agent, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import pg from 'pg'
import { apiRoutes } from '../examples/demo/src/api/index.ts'
import { hashPassword } from '../examples/demo/src/auth/passwords.ts'
import * as schema from '../examples/demo/src/schema.ts'
import {
  createApiKey,
  createDatabaseApiKeyProvider,
  createRateLimiters,
  createRecordCounter,
} from '../src/api/index.ts'
import { errorHandler, silentLogger } from '../src/core/index.ts'
import { createDatabase, createModelRegistry, migrate } from '../src/db/index.ts'
import { createMcpServer, mcpEndpoint } from '../src/mcp/index.ts'
import { createBearerValidator, signAccessToken } from '../src/oauth/index.ts'
import { type BenchOptions, type BenchResult, compare } from './lib.ts'

const ROWS = 10_000
const POOL = 10
const CONCURRENCY = 16
const PER_PAGE = 20
const SECRET = 'bench-mcp-secret-0123456789-abcdefghijkl'

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
  let server: Server | undefined
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY })
  try {
    await migrate(database, {
      appMigrationsDir: new URL('../examples/demo/migrations', import.meta.url).pathname,
      logger: { info() {}, warn() {} } as never,
    })
    await seed(url.toString())
    const logger = silentLogger()
    const { rawKey } = await createApiKey(database, { name: 'bench', scopes: ['*'] })
    const apiKeys = createDatabaseApiKeyProvider({ database, logger })
    const limiters = createRateLimiters({ limiters: { api: { points: 1_000_000_000 } } })
    const models = createModelRegistry(schema, 'postgres')

    let handler: Hono | undefined
    server = serve({
      fetch: (req) => (handler ? handler.fetch(req) : new Response(null, { status: 503 })),
      port: 0,
      hostname: '127.0.0.1',
    }) as Server
    await new Promise((r) => (server!.listening ? r(null) : server!.once('listening', r)))
    const port = (server.address() as AddressInfo).port
    const origin = `http://127.0.0.1:${port}`

    const app = new Hono()
    app.onError(errorHandler({ logger }))
    app.route('/', apiRoutes({ database, apiKeys, limiters, hashPassword, logger }))
    const exact = new Hono()
    exact.onError(errorHandler({ logger }))
    exact.route(
      '/',
      apiRoutes({
        database,
        apiKeys,
        limiters,
        hashPassword,
        logger,
        counts: createRecordCounter({ ttlMs: 0 }),
      }),
    )
    app.route('/exact', exact)
    app.route(
      '/mcp',
      mcpEndpoint({
        validator: createBearerValidator({
          secret: SECRET,
          issuer: origin,
          resource: `${origin}/mcp`,
        }),
        resourceMetadataUrl: `${origin}/.well-known/oauth-protected-resource/mcp`,
        createServer: (caller) => createMcpServer({ data: { database, models, caller, logger } }),
      }),
    )
    handler = app

    const now = Math.floor(Date.now() / 1000)
    const token = await signAccessToken(
      {
        sub: '1',
        client_id: 'bench',
        scope: 'mcp',
        aud: `${origin}/mcp`,
        iss: origin,
        iat: now,
        exp: now + 3600,
        jti: randomUUID(),
      },
      new TextEncoder().encode(SECRET),
    )
    const restHeaders = { authorization: `Bearer ${rawKey}` }
    const mcpHeaders = {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    }
    let id = 0
    const crudList = async () => {
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        params: { name: 'crud_list', arguments: { model: 'posts', page: 1, per_page: PER_PAGE } },
      })
      const answer = (await send(agent, port, 'POST', '/mcp', mcpHeaders, body)) as {
        result?: { isError?: boolean; structuredContent?: { records: unknown[] } }
      }
      if (answer.result?.isError || answer.result?.structuredContent?.records.length !== PER_PAGE) {
        throw new Error(`crud_list: unexpected answer ${JSON.stringify(answer).slice(0, 200)}`)
      }
    }
    const restList = (prefix: string) => async () => {
      const page = (await send(
        agent,
        port,
        'GET',
        `${prefix}/api/v1/posts?page=1&per_page=${PER_PAGE}`,
        restHeaders,
      )) as {
        data: unknown[]
      }
      if (page.data.length !== PER_PAGE) throw new Error('REST list: unexpected page')
    }
    // Both sides answer before they are timed.
    await crudList()
    await restList('/exact')()
    await restList('')()
    const settings = quick
      ? { rounds: 2, durationMs: 500, concurrency: CONCURRENCY }
      : { rounds: 6, durationMs: 2_000, concurrency: CONCURRENCY }
    const notes = `${ROWS.toLocaleString('en-US')} posts, page 1 of ${PER_PAGE}, ${CONCURRENCY} concurrent keep-alive clients, pool ${POOL}`
    const results: BenchResult[] = []
    results.push({
      name: 'crud_list over Streamable HTTP (POST /mcp)',
      baseline: 'GET /api/v1/posts, total counted per request',
      ...(await compare(crudList, restList('/exact'), settings)),
      notes: `${notes}; both run the page query and count(*) on every call`,
    })
    results.push({
      name: 'crud_list over Streamable HTTP (POST /mcp)',
      baseline: 'GET /api/v1/posts, cached total (default)',
      ...(await compare(crudList, restList(''), settings)),
      notes: `${notes}; the REST side answers the total from its record counter`,
    })
    await apiKeys.close()
    return results
  } finally {
    agent.destroy()
    if (server) {
      ;(server as { closeAllConnections?: () => void }).closeAllConnections?.()
      await new Promise((r) => server!.close(() => r(null)))
    }
    await database.close()
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
    await admin.end()
  }
}

async function seed(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(
      `INSERT INTO users (email, name, password_hash) VALUES ('bench@example.com', 'Bench', 'x')`,
    )
    await client.query(
      `INSERT INTO posts (title, body, published, token_count, author_id)
       SELECT 'Post ' || n, repeat('lorem ipsum ', 20), n % 2 = 0, n % 1000, 1
       FROM generate_series(1, ${ROWS}) AS n`,
    )
    await client.query('ANALYZE posts')
  } finally {
    await client.end()
  }
}

function send(
  agent: Agent,
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, agent, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`${method} ${path}: ${res.statusCode}`))
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')))
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}
