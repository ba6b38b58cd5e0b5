import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from '@modelcontextprotocol/client'
import { sql } from 'drizzle-orm'
import { pgTable, text as pgText, serial } from 'drizzle-orm/pg-core'
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  createRealtime,
  createRecordCounter,
  defineResource,
  type Realtime,
  resourceOperations,
} from '../../../src/api/index.ts'
import { errorHandler, silentLogger } from '../../../src/core/index.ts'
import { createModelRegistry, type Database } from '../../../src/db/index.ts'
import { type DataTools, mcpSubscriptions } from '../../../src/mcp/index.ts'
import { hmacKey, signAccessToken } from '../../../src/oauth/protocol/access-token.ts'
import { describeEachDatabase, type TestDatabase } from '../../support/databases.ts'
import { type McpTestApp, SECRET, serveMcpTestApp } from '../support/http-app.ts'

const tables = {
  sqlite: sqliteTable('tickets', {
    id: integer('id').primaryKey({ autoIncrement: true }),
    tenant_id: text('tenant_id').notNull(),
    title: text('title').notNull(),
  }),
  postgres: pgTable('tickets', {
    id: serial('id').primaryKey(),
    tenant_id: pgText('tenant_id').notNull(),
    title: pgText('title').notNull(),
  }),
}
const DDL = {
  sqlite: `CREATE TABLE tickets (id integer PRIMARY KEY AUTOINCREMENT, tenant_id text NOT NULL, title text NOT NULL)`,
  postgres: `CREATE TABLE tickets (id serial PRIMARY KEY, tenant_id text NOT NULL, title text NOT NULL)`,
}
const CreateTicket = z.strictObject({ tenant_id: z.string(), title: z.string() })
const URI = 'kiln://models/tickets'
const UPDATED = 'notifications/resources/updated'

describeEachDatabase('MCP resource subscriptions', (backend) => {
  let test: TestDatabase
  let database: Database
  let realtime: Realtime
  let app: McpTestApp
  let watch: DataTools['watch']

  beforeAll(async () => {
    test = await backend.create()
    database = test.database
    const tickets = database.dialect === 'sqlite' ? tables.sqlite : tables.postgres
    if (database.dialect === 'sqlite') database.db.run(sql.raw(DDL.sqlite))
    else await database.db.execute(sql.raw(DDL.postgres))
    realtime = createRealtime({})
    const resource = defineResource(tickets as never, { requests: { create: CreateTicket } })
    const rest = resourceOperations(resource, {
      db: database.db,
      counts: createRecordCounter(),
      realtime,
    })
    app = await serveMcpTestApp(
      database,
      createModelRegistry({ tickets }, database.dialect),
      { unlisted: 'all', approval: [] },
      {
        // The REST write, as an app's generated route makes it (no key: the test's own route).
        routes: (hono) => {
          hono.onError(errorHandler({ logger: silentLogger() }))
          hono.post('/api/v1/tickets', async (c) =>
            c.json(await rest.store({ request: c.req.raw, caller: undefined }), 201),
          )
        },
        realtime,
        subscriptions: (tools) => {
          watch = tools.watch
          return mcpSubscriptions({ watch, feed: realtime.feed, keepAliveMs: 60_000 })
        },
      },
    )
  })

  afterAll(async () => {
    await app?.close()
    await realtime?.close()
    await test?.cleanup()
  })

  /** A token of user 1 in `tenant`, with the scope and grant given. */
  async function token(tenant: string, grant?: Record<string, Array<'read'>>, scope = 'mcp:read') {
    const now = Math.floor(Date.now() / 1000)
    return signAccessToken(
      {
        iss: app.origin,
        aud: `${app.origin}/mcp`,
        sub: '1',
        tenant_id: tenant,
        client_id: 'test-client',
        grant_id: 'test-grant',
        scope,
        iat: now,
        exp: now + 600,
        jti: `jti-${tenant}-${Math.random()}`,
        ...(grant ? { grant } : {}),
      },
      hmacKey(SECRET),
    )
  }

  /** A v2 SDK client with the token, in the era `version` asks for. */
  async function connect(bearer: string, version: 'modern' | 'legacy') {
    const client = new ClientV2(
      { name: 'kiln-subscriber', version: '1' },
      version === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
    )
    const updates: string[] = []
    let heard: () => void = () => {}
    client.setNotificationHandler(UPDATED, (notification) => {
      updates.push(notification.params.uri)
      heard()
    })
    const next = () => new Promise<void>((resolve) => (heard = resolve))
    await client.connect(
      new TransportV2(app.mcpUrl, {
        requestInit: { headers: { authorization: `Bearer ${bearer}` } },
      }),
    )
    return { client, updates, next }
  }

  const post = (tenant: string, title: string) =>
    fetch(`${app.origin}/api/v1/tickets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tenant_id: tenant, title }),
    })

  it("reads a change under the caller's view: its tenant sees it, another tenant does not", async () => {
    const made = (await (await post('t1', 'seen by t1')).json()) as { data: { id: number } }
    const caller = { userId: '1', scopes: ['mcp:read'] }
    expect(await watch.sees({ ...caller, tenantId: 't1' }, 'tickets', made.data.id)).toBe(true)
    expect(await watch.sees({ ...caller, tenantId: 't2' }, 'tickets', made.data.id)).toBe(false)
    expect(
      await watch.sees({ ...caller, tenantId: 't1', grant: {} }, 'tickets', made.data.id),
    ).toBe(false)
    // A hard delete cannot be read: told to a tenant only of a record its stream was told of.
    const t1 = { ...caller, tenantId: 't1' }
    expect(await watch.sawDeleted(t1, 'tickets', made.data.id, false)).toBe(false)
    expect(await watch.sawDeleted(t1, 'tickets', made.data.id, true)).toBe(true)
    expect(await watch.sawDeleted(caller, 'tickets', made.data.id, false)).toBe(true)
    expect(watch.subscribable({ ...caller, grant: {} }, [URI])).toEqual([])
    expect(watch.subscribable({ ...caller, scopes: [] }, [URI])).toEqual([])
    expect(watch.subscribable(caller, [URI, 'kiln://models/nope'])).toEqual([URI])
  })

  describe('2026-07-28: subscriptions/listen', () => {
    it('is acknowledged for a readable model and notified after a REST write in view', async () => {
      const { client, updates, next } = await connect(await token('t1'), 'modern')
      expect(client.getServerCapabilities()?.resources?.subscribe).toBe(true)
      const subscription = await client.listen({ resourceSubscriptions: [URI] })
      expect(subscription.honoredFilter).toEqual({ resourceSubscriptions: [URI] })
      const heard = next()
      expect((await post('t1', 'mine')).status).toBe(201)
      await heard
      expect(updates).toEqual([URI])
      await subscription.close()
      await client.close()
    })

    it('is notified of an MCP write too (crud_create of another client)', async () => {
      const { client, updates, next } = await connect(await token('t1'), 'modern')
      const subscription = await client.listen({ resourceSubscriptions: [URI] })
      const writer = await connect(await token('t1', undefined, 'mcp:read mcp:write'), 'modern')
      const heard = next()
      const made = await writer.client.callTool({
        name: 'crud_create',
        arguments: { model: 'tickets', data: { tenant_id: 't1', title: 'by an assistant' } },
      })
      expect(made.isError ?? false, JSON.stringify(made.content)).toBe(false)
      await heard
      expect(updates).toEqual([URI])
      await subscription.close()
      await writer.client.close()
      await client.close()
    })

    it('honours nothing for a token without the model in its grant', async () => {
      const { client } = await connect(await token('t1', { other: ['read'] }), 'modern')
      const subscription = await client.listen({ resourceSubscriptions: [URI] })
      expect(subscription.honoredFilter).toEqual({})
      expect(await subscription.closed).toBe('graceful')
      await client.close()
    })
  })

  describe('2025-11-25: resources/subscribe and the session stream', () => {
    it('subscribes within the session and is notified on its GET stream', async () => {
      const { client, updates, next } = await connect(await token('t1'), 'legacy')
      expect(client.getServerCapabilities()?.resources?.subscribe).toBe(true)
      await client.subscribeResource({ uri: URI })
      const heard = next()
      expect((await post('t1', 'legacy')).status).toBe(201)
      await heard
      expect(updates).toEqual([URI])
      await client.unsubscribeResource({ uri: URI })
      await client.close()
    })

    it('refuses a token without the model in its grant, as an unknown resource', async () => {
      const { client } = await connect(await token('t1', { other: ['read'] }), 'legacy')
      await expect(client.subscribeResource({ uri: URI })).rejects.toMatchObject({
        code: -32602,
      })
      await client.close()
    })
  })
})
