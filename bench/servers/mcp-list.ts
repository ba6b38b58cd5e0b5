/**
 * The server both MCP benchmarks load (`bench/mcp.ts` in process, `bench/mcp-wrk.ts` with wrk):
 * the demo's REST API and kiln's `/mcp` endpoint with the data tools, as an app mounts them,
 * over 10,000 demo posts on PostgreSQL (KILN_BENCH_DATABASE_URL, else KILN_TEST_DATABASE_URL,
 * else the local server; a scratch database is created and dropped by `close`).
 *
 * - `GET /api/v1/posts`: the REST list with its default cached total;
 * - `GET /exact/api/v1/posts`: the REST list counting the total on every request, as
 *   `crud_list` does;
 * - `POST /mcp`: bearer-token auth and the data tools.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import pg from 'pg'
import { apiRoutes } from '../../examples/demo/src/api/index.ts'
import { hashPassword } from '../../examples/demo/src/auth.ts'
import * as schema from '../../examples/demo/src/schema.ts'
import {
  createApiKey,
  createDatabaseApiKeyProvider,
  createRateLimiters,
  createRecordCounter,
} from '../../src/api/index.ts'
import { errorHandler, silentLogger } from '../../src/core/index.ts'
import { createDatabase, createModelRegistry, migrate } from '../../src/db/index.ts'
import { createDataTools, createMcpServer, mcpEndpoint } from '../../src/mcp/index.ts'
import { createBearerValidator, signAccessToken } from '../../src/oauth/index.ts'

export const ROWS = 10_000
const SECRET = 'bench-mcp-secret-0123456789-abcdefghijkl'

export interface McpListServer {
  origin: string
  port: number
  /** An API key for the REST routes (`Authorization: Bearer …`). */
  restKey: string
  /** An access token with `mcp:read mcp:write` for `/mcp`. */
  token: string
  close(): Promise<void>
}

export async function startMcpListServer(options: { poolMax: number }): Promise<McpListServer> {
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
  const database = await createDatabase(url.toString(), { poolMax: options.poolMax })
  let server: Server | undefined
  let closeKeys = async () => {}
  const close = async () => {
    await closeKeys()
    if (server) {
      ;(server as { closeAllConnections?: () => void }).closeAllConnections?.()
      await new Promise((resolve) => server!.close(() => resolve(null)))
    }
    await database.close()
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
    await admin.end()
  }
  try {
    if (database.dialect !== 'postgres') throw new TypeError('expected a Postgres database')
    await migrate(database, {
      appMigrationsDir: new URL('../../examples/demo/migrations', import.meta.url).pathname,
      logger: { info() {}, warn() {} } as never,
    })
    await seed(url.toString())
    const logger = silentLogger()
    const { rawKey } = await createApiKey(database, { name: 'bench', scopes: ['*'] })
    const apiKeys = createDatabaseApiKeyProvider({ database, logger })
    closeKeys = () => apiKeys.close()
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
    const tools = createDataTools({ database, models, logger })
    app.route(
      '/mcp',
      mcpEndpoint({
        validator: createBearerValidator({
          secret: SECRET,
          issuer: origin,
          resource: `${origin}/mcp`,
        }),
        resourceMetadataUrl: `${origin}/.well-known/oauth-protected-resource/mcp`,
        createServer: (caller) => createMcpServer({ dataTools: { tools, caller } }),
      }),
    )
    handler = app

    const now = Math.floor(Date.now() / 1000)
    const token = await signAccessToken(
      {
        sub: '1',
        client_id: 'bench',
        grant_id: 'bench-grant',
        scope: 'mcp:read mcp:write',
        aud: `${origin}/mcp`,
        iss: origin,
        iat: now,
        exp: now + 3600,
        jti: randomUUID(),
      },
      new TextEncoder().encode(SECRET),
    )
    return { origin, port, restKey: rawKey, token, close }
  } catch (error) {
    await close()
    throw error
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
