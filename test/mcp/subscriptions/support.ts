import { sql } from 'drizzle-orm'
import { pgTable, text as pgText, serial } from 'drizzle-orm/pg-core'
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { z } from 'zod'
import {
  createRealtime,
  createRecordCounter,
  defineResource,
  type Realtime,
  type RealtimeOptions,
  resourceOperations,
} from '../../../src/api/index.ts'
import { errorHandler, type KeyValueStore, silentLogger } from '../../../src/core/index.ts'
import { createModelRegistry, type Database, type RowFilter } from '../../../src/db/index.ts'
import { type DataTools, mcpSubscriptions } from '../../../src/mcp/index.ts'
import { hmacKey, signAccessToken } from '../../../src/oauth/protocol/access-token.ts'
import { type McpTestApp, SECRET, serveMcpTestApp } from '../support/http-app.ts'

/** A table object of `tickets` of its own, on which a test may declare a read policy. */
export function ticketsTable(dialect: Database['dialect']) {
  return dialect === 'sqlite'
    ? sqliteTable('tickets', {
        id: integer('id').primaryKey({ autoIncrement: true }),
        tenant_id: text('tenant_id').notNull(),
        title: text('title').notNull(),
      })
    : pgTable('tickets', {
        id: serial('id').primaryKey(),
        tenant_id: pgText('tenant_id').notNull(),
        title: pgText('title').notNull(),
      })
}
const DDL = {
  sqlite: `CREATE TABLE tickets (id integer PRIMARY KEY AUTOINCREMENT, tenant_id text NOT NULL, title text NOT NULL)`,
  postgres: `CREATE TABLE tickets (id serial PRIMARY KEY, tenant_id text NOT NULL, title text NOT NULL)`,
}
const CreateTicket = z.strictObject({ tenant_id: z.string(), title: z.string() })

export const URI = 'kiln://models/tickets'
export const UPDATED = 'notifications/resources/updated'

/** The tenant-scoped `tickets` table, created once per test database. */
export async function createTickets(database: Database) {
  if (database.dialect === 'sqlite') database.db.run(sql.raw(DDL.sqlite))
  else await database.db.execute(sql.raw(DDL.postgres))
  return ticketsTable(database.dialect)
}

/** One instance: the tickets' REST create (no key: the test's own route) and `/mcp` with subscriptions. */
export interface TicketsInstance {
  app: McpTestApp
  realtime: Realtime
  watch: DataTools['watch']
  post(tenant: string, title: string): Promise<Response>
  /** The tickets' REST update (no key). */
  patch(id: number, data: { tenant_id?: string; title?: string }): Promise<Response>
  /** A token of user 1 of `test-client` in `tenant`, for this instance. */
  token(tenant: string, grant?: Record<string, Array<'read'>>, scope?: string): Promise<string>
  close(): Promise<void>
}

export async function ticketsInstance(
  database: Database,
  tickets: Awaited<ReturnType<typeof createTickets>>,
  options: { realtime?: RealtimeOptions; store?: KeyValueStore; rows?: RowFilter } = {},
): Promise<TicketsInstance> {
  const realtime = createRealtime(options.realtime ?? {})
  const resource = defineResource(tickets as never, {
    requests: { create: CreateTicket, update: CreateTicket.partial() },
    rows: options.rows,
  })
  const rest = resourceOperations(resource, {
    db: database.db,
    counts: createRecordCounter(),
    realtime,
  })
  let watch: DataTools['watch'] | undefined
  const app = await serveMcpTestApp(
    database,
    createModelRegistry({ tickets }, database.dialect),
    { unlisted: 'all', approval: [] },
    {
      routes: (hono) => {
        hono.onError(errorHandler({ logger: silentLogger() }))
        hono.post('/api/v1/tickets', async (c) =>
          c.json(await rest.store({ request: c.req.raw, caller: undefined }), 201),
        )
        hono.patch('/api/v1/tickets/:id', async (c) =>
          c.json(
            await rest.update({ request: c.req.raw, caller: undefined, id: c.req.param('id') }),
          ),
        )
      },
      realtime,
      subscriptions: (tools) => {
        watch = tools.watch
        return mcpSubscriptions({
          watch,
          feed: realtime.feed,
          store: options.store,
          keepAliveMs: 60_000,
        })
      },
    },
  )
  return {
    app,
    realtime,
    watch: watch!,
    post: (tenant, title) =>
      fetch(`${app.origin}/api/v1/tickets`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ tenant_id: tenant, title }),
      }),
    patch: (id, data) =>
      fetch(`${app.origin}/api/v1/tickets/${id}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(data),
      }),
    token(tenant, grant, scope = 'mcp:read') {
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
    },
    async close() {
      await app.close()
      await realtime.close()
    },
  }
}
