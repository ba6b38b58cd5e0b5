import { mkdtempSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { serve } from '@hono/node-server'
import type { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDemoApp } from '../../examples/demo/src/app.ts'
import { createDemoContext } from '../../examples/demo/src/context.ts'
import { silentLogger } from '../../src/core/index.ts'
import { createPostgresTestDatabase, throughPgBouncer } from '../support/databases.ts'
import { demoAccessToken } from '../support/demo-oauth.ts'
import { pgbouncerUrl, postgresUrl } from '../support/env.ts'

const EMAIL = 'demo@example.com'
const PASSWORD = 'correct horse battery'

/**
 * Without Redis, an assistant's token outlives a restart when MCP_TOKEN_SECRET is set (issue
 * #39): the token families and revocations live in the database, not the process's memory. Two
 * demo instances over one database, one after the other, on the same address.
 */
interface Place {
  name: string
  available: boolean
  open(): Promise<{ url: string; drop(): Promise<void> }>
}

const places: Place[] = [
  {
    // The demo is a PostgreSQL app: its embedded server, in a folder, outlives the restart.
    name: 'pglite',
    available: true,
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'kiln-restart-'))
      return { url: `pglite:${dir}`, drop: async () => rmSync(dir, { recursive: true }) }
    },
  },
  {
    name: 'postgres',
    available: postgresUrl !== undefined,
    open: () => createPostgresTestDatabase(),
  },
  {
    name: 'pgbouncer',
    available: postgresUrl !== undefined && pgbouncerUrl !== undefined,
    async open() {
      const created = await createPostgresTestDatabase()
      return { url: throughPgBouncer(created.url), drop: created.drop }
    },
  },
]

for (const place of places) {
  describe.skipIf(!place.available)(`a restart without Redis [${place.name}]`, () => {
    let handler: Hono | undefined
    let server: ReturnType<typeof serve>
    let origin: string
    let database: { url: string; drop(): Promise<void> }

    beforeAll(async () => {
      server = serve({
        fetch: (request) =>
          handler ? handler.fetch(request) : new Response(null, { status: 503 }),
        port: 0,
        hostname: '127.0.0.1',
      })
      await new Promise<void>((resolve) => server.once('listening', () => resolve()))
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      database = await place.open()
    }, 60_000)

    afterAll(async () => {
      await new Promise<void>((resolve) => {
        ;(server as { closeAllConnections?: () => void }).closeAllConnections?.()
        server.close(() => resolve())
      })
      await database?.drop()
    })

    /** One instance of the app: no REDIS_URL, the same secret and database each time. */
    async function start() {
      const ctx = await createDemoContext({
        databaseUrl: database.url,
        logger: silentLogger(),
        env: {
          APP_URL: origin,
          MCP_TOKEN_SECRET: 'restart-without-redis-secret-0123456789-abcdef',
          DEMO_EMAIL: EMAIL,
          DEMO_PASSWORD: PASSWORD,
        },
      })
      const app = await createDemoApp(ctx)
      handler = app
      return { ctx, app }
    }

    const initialize = (token: string) =>
      fetch(`${origin}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-11-25',
            capabilities: {},
            clientInfo: { name: 'restart', version: '1.0.0' },
          },
        }),
      })

    it('keeps the assistant signed in across the restart', async () => {
      const first = await start()
      const token = await demoAccessToken(first.app, origin, EMAIL, PASSWORD)
      expect((await initialize(token)).status).toBe(200)
      handler = undefined
      await first.ctx.close()

      const second = await start()
      try {
        const answer = await initialize(token)
        expect(answer.status, await answer.clone().text()).toBe(200)
      } finally {
        handler = undefined
        await second.ctx.close()
      }
    })
  })
}
