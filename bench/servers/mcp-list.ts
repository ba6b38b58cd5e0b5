/**
 * The server both MCP benchmarks load (`bench/mcp.ts` in process, `bench/mcp-wrk.ts` with wrk):
 * the demo's REST API and kiln's `/mcp` endpoint with the data tools, as an app mounts them,
 * over 10,000 demo posts in a scratch PostgreSQL database (`demo-database.ts`), dropped by
 * `close`.
 *
 * - `GET /api/v1/posts`: the REST list with its default cached total;
 * - `GET /exact/api/v1/posts`: the REST list counting the total on every request, as
 *   `crud_list` does;
 * - `POST /mcp`: bearer-token auth and the data tools, beside `bench_noop`, a tool that answers
 *   at once without touching the database: what the endpoint, auth and the SDK cost per call.
 */
import { randomUUID } from 'node:crypto'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { apiRoutes } from '../../examples/demo/src/api/index.ts'
import { hashPassword } from '../../examples/demo/src/auth.ts'
import * as schema from '../../examples/demo/src/schema.ts'
import { createDatabaseApiKeyProvider, createRecordCounter } from '../../src/api/index.ts'
import { createRateLimiters } from '../../src/core/http/rate-limiters.ts'
import { errorHandler, silentLogger } from '../../src/core/index.ts'
import { createDatabase, createModelRegistry } from '../../src/db/index.ts'
import {
  createDataTools,
  createMcpServer,
  type McpServer,
  mcpEndpoint,
} from '../../src/mcp/index.ts'
import { createBearerValidator } from '../../src/oauth/index.ts'
import { signAccessToken } from '../../src/oauth/protocol/access-token.ts'
import { createDemoDatabase } from './demo-database.ts'

export const ROWS = 10_000
const UNREACHED = { max: Number.MAX_SAFE_INTEGER, windowMs: 60_000 }
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

/** `bench_noop`: no arguments, no database, a one-line answer. */
function registerNoop(server: McpServer): void {
  server.registerTool(
    'bench_noop',
    { description: 'Answers at once: the cost of a call without its work.' },
    () => ({ content: [{ type: 'text', text: 'noop' }] }),
  )
}

export async function startMcpListServer(options: { poolMax: number }): Promise<McpListServer> {
  const scratch = await createDemoDatabase(ROWS)
  const database = await createDatabase(scratch.url, { poolMax: options.poolMax })
  let server: Server | undefined
  let closeKeys = async () => {}
  const close = async () => {
    await closeKeys()
    if (server) {
      ;(server as { closeAllConnections?: () => void }).closeAllConnections?.()
      await new Promise((resolve) => server!.close(() => resolve(null)))
    }
    await database.close()
    await scratch.drop()
  }
  try {
    if (database.dialect !== 'postgres') throw new TypeError('expected a Postgres database')
    const logger = silentLogger()
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
        // One token drives the whole run: its limits are counted (that cost is measured) but
        // never reached.
        rateLimit: { perClient: UNREACHED, perUser: UNREACHED },
        createServer: (caller) =>
          createMcpServer({ dataTools: { tools, caller }, register: [registerNoop] }),
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
    return { origin, port, restKey: scratch.apiKey, token, close }
  } catch (error) {
    await close()
    throw error
  }
}
