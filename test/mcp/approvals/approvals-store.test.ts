import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { sql } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  type KeyValueStore,
  ManualClock,
  MemoryKeyValueStore,
  RedisKeyValueStore,
  silentLogger,
} from '../../../src/core/index.ts'
import {
  createAuditLog,
  createDatabase,
  createModelRegistry,
  migrate,
  type SqliteDatabase,
} from '../../../src/db/index.ts'
import {
  type ApprovalOptions,
  approvalPages,
  createAuditTrail,
  createDataTools,
  createMcpServer,
  type McpAccessOptions,
  type McpCaller,
  type McpModelSource,
} from '../../../src/mcp/index.ts'
import { createTestRedis, describeWithRedis, type TestRedis } from '../../support/redis.ts'
import { call, connectInMemory } from '../support/client.ts'
import { createTestTables, schemaFor } from '../support/schema.ts'

const APP_URL = 'https://app.example'
const ACCESS: McpAccessOptions = {
  models: {
    notes: {
      tools: ['crud_list', 'crud_create', 'crud_update', 'crud_delete'],
      // A write the policy marks, beside the default delete.
      approval: ['crud_update', 'crud_delete'],
    },
  },
}
const ADA: McpCaller = { userId: '1', clientId: 'client-a', tenantId: 't1' }
const SESSION = { userId: '1', csrfToken: 'csrf-ada' }

interface Link {
  approval_id: string
  approval_url: string
}

let database: SqliteDatabase
let models: McpModelSource
const clients: Client[] = []

beforeAll(async () => {
  database = (await createDatabase('sqlite::memory:')) as SqliteDatabase
  await migrate(database, { logger: { info: () => {}, warn: () => {} } })
  await createTestTables(database)
  models = createModelRegistry(schemaFor(database), database.dialect)
})
afterAll(async () => database?.close())
beforeEach(async () => {
  database.db.run(sql`DELETE FROM notes`)
  database.db.run(
    sql`INSERT INTO notes (id, tenant_id, title, created_at, updated_at) VALUES (1, 't1', 'Draft', 0, 0)`,
  )
})
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close()
})

/** One instance of the app: its own data tools over `store`, and its approval page. */
function instance(
  store: KeyValueStore,
  extra: Partial<ApprovalOptions> = {},
  audit?: ReturnType<typeof createAuditTrail>,
) {
  const approvals = { store, pageUrl: (id: string) => `${APP_URL}/approvals/${id}`, ...extra }
  const tools = createDataTools({
    database,
    models,
    access: ACCESS,
    approvals,
    audit,
    logger: silentLogger(),
  })
  const pages = approvalPages({
    store: tools.approvals,
    appUrl: APP_URL,
    session: async (request) =>
      request.headers.get('cookie') === 'session=ada' ? SESSION : undefined,
  })
  return {
    async connect(caller: McpCaller = ADA): Promise<Client> {
      const client = await connectInMemory(createMcpServer({ dataTools: { tools, caller } }))
      clients.push(client)
      return client
    },
    page: (path: string) => pages.request(path, { headers: { cookie: 'session=ada' } }),
    decide: (path: string, decision: 'approve' | 'deny') =>
      pages.request(path, {
        method: 'POST',
        headers: {
          cookie: 'session=ada',
          origin: APP_URL,
          host: 'app.example',
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ csrf_token: SESSION.csrfToken, decision }).toString(),
      }),
  }
}

async function title(): Promise<string | undefined> {
  const [row] = database.db.all<{ title: string }>(sql`SELECT title FROM notes WHERE id = 1`)
  return row?.title
}

async function linkOf(client: Client, args: Record<string, unknown>, tool = 'crud_update') {
  const result = (await client.callTool({ name: tool, arguments: args })) as CallToolResult
  expect(result.isError).not.toBe(true)
  return result.structuredContent as unknown as Link
}

describeWithRedis('approvals in Redis, across instances', () => {
  let redis: TestRedis
  beforeAll(async () => {
    redis = await createTestRedis()
  })
  afterAll(async () => redis?.cleanup())

  it('asked on one instance, approved on a second, run once on a third', async () => {
    const store = () =>
      new RedisKeyValueStore(redis.connections.connect(), { prefix: `${redis.prefix}:` })
    const [first, second, third] = [instance(store()), instance(store()), instance(store())]
    const update = { model: 'notes', id: 1, data: { title: 'Final', pinned: true } }
    const link = await linkOf(await first.connect(), update)
    const path = new URL(link.approval_url).pathname

    const page = await second.page(path)
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain('Change notes record 1')
    // Each field written, from its value now to the new one.
    expect(html).toMatch(
      /<code>title<\/code><\/th><td><code>&quot;Draft&quot;<\/code><\/td><td><code>&quot;Final&quot;<\/code>/,
    )
    expect(html).toMatch(
      /<code>pinned<\/code><\/th><td><code>false<\/code><\/td><td><code>true<\/code>/,
    )
    expect((await second.decide(path, 'approve')).status).toBe(200)
    expect(await title()).toBe('Draft')

    const client = await third.connect()
    const done = await call(client, 'crud_update', { ...update, approval_id: link.approval_id })
    expect(done).toMatchObject({ isError: false, json: { title: 'Final', pinned: true } })
    const again = await call(client, 'crud_update', { ...update, approval_id: link.approval_id })
    expect(again.isError).toBe(true)
  })
})

describe('approvals are bound and expire', () => {
  it('refuses the retry of another client or with other values, and answers the original', async () => {
    const app = instance(new MemoryKeyValueStore())
    const update = { model: 'notes', id: 1, data: { title: 'Mine' } }
    const link = await linkOf(await app.connect(), update)
    await app.decide(new URL(link.approval_url).pathname, 'approve')

    const otherClient = await app.connect({ ...ADA, clientId: 'client-b' })
    const stolen = await call(otherClient, 'crud_update', {
      ...update,
      approval_id: link.approval_id,
    })
    expect(stolen).toMatchObject({ isError: true })
    expect(stolen.text).toMatch(/not yours/)
    const otherUser = await app.connect({ ...ADA, userId: '2' })
    expect(
      (await call(otherUser, 'crud_update', { ...update, approval_id: link.approval_id })).isError,
    ).toBe(true)
    const client = await app.connect()
    const changed = await call(client, 'crud_update', {
      model: 'notes',
      id: 1,
      data: { title: 'Something else' },
      approval_id: link.approval_id,
    })
    expect(changed).toMatchObject({ isError: true })
    expect(changed.text).toMatch(/is for another call \(Change notes record 1\)/)
    expect(await title()).toBe('Draft')
    // Keys in another order are the same call.
    const ok = await call(client, 'crud_update', {
      data: { title: 'Mine' },
      id: 1,
      approval_id: link.approval_id,
      model: 'notes',
    })
    expect(ok.isError).toBe(false)
    expect(await title()).toBe('Mine')
  })

  it('expires after 10 minutes, approved or not', async () => {
    const clock = new ManualClock()
    const app = instance(new MemoryKeyValueStore({ clock }), { clock })
    const client = await app.connect()
    const remove = { model: 'notes', id: 1 }
    const link = await linkOf(client, remove, 'crud_delete')
    const path = new URL(link.approval_url).pathname
    expect((await app.decide(path, 'approve')).status).toBe(200)
    clock.advance(10 * 60_000)
    const late = await call(client, 'crud_delete', { ...remove, approval_id: link.approval_id })
    expect(late).toMatchObject({ isError: true })
    expect(late.text).toMatch(/expired/)
    expect((await app.page(path)).status).toBe(404)
    expect(await title()).toBe('Draft')

    const pending = await linkOf(client, remove, 'crud_delete')
    clock.advance(10 * 60_000 + 1)
    const pendingPath = new URL(pending.approval_url).pathname
    expect((await app.decide(pendingPath, 'approve')).status).toBe(404)
    expect(await title()).toBe('Draft')
  })

  it('the audit trail records each held call, then the approved one', async () => {
    database.db.run(sql`DELETE FROM kiln_mcp_audit`)
    const trail = createAuditTrail({ database, flushIntervalMs: 3_600_000 })
    const app = instance(new MemoryKeyValueStore(), {}, trail)
    const client = await app.connect()
    const remove = { model: 'notes', id: 1 }
    const link = await linkOf(client, remove, 'crud_delete')
    const early = await call(client, 'crud_delete', { ...remove, approval_id: link.approval_id })
    expect(early.isError).toBe(false)
    await app.decide(new URL(link.approval_url).pathname, 'approve')
    const moved = await call(client, 'crud_delete', {
      model: 'notes',
      id: 2,
      approval_id: link.approval_id,
    })
    expect(moved.isError).toBe(true)
    await call(client, 'crud_delete', { ...remove, approval_id: link.approval_id })
    await call(client, 'crud_delete', { ...remove, approval_id: link.approval_id })
    await trail.close()
    // The page's view of the record is read as the caller: a crud_list of its own.
    const entries = (await createAuditLog(database).list({ tool: 'crud_delete' })).reverse()
    expect(entries.map((e) => [e.tool, e.outcome, e.recordIds, e.userId, e.clientId])).toEqual([
      ['crud_delete', 'awaiting_approval', [1], '1', 'client-a'],
      ['crud_delete', 'awaiting_approval', [1], '1', 'client-a'],
      // The person's decision, recorded when made on the page.
      ['crud_delete', 'approved', [1], '1', 'client-a'],
      ['crud_delete', 'refused', [2], '1', 'client-a'],
      ['crud_delete', 'ok', [1], '1', 'client-a'],
      ['crud_delete', 'refused', [1], '1', 'client-a'],
    ])
    // The approval's id is no part of the record (only the user's session can use it anyway):
    // its entries name it by a digest.
    const ref = /^Waiting for the user's approval (\(approval [0-9a-f]{16}\))$/.exec(
      entries[0]!.message!,
    )![1]!
    expect(entries[1]!.message).toBe(entries[0]!.message)
    // How it was allowed: on the page, by the user the token acts for.
    expect(entries[2]!.message).toMatch(/^Approved on the approval page by user 1 at \d{4}-/)
    expect(entries[2]!.message!.endsWith(ref)).toBe(true)
    expect(JSON.stringify(entries)).not.toContain(link.approval_id)
  })

  it('a call the policy does not mark runs at once; approval_id there is ignored', async () => {
    const app = instance(new MemoryKeyValueStore())
    const client = await app.connect()
    const created = await call(client, 'crud_create', {
      model: 'notes',
      data: { title: 'No approval needed' },
    })
    expect(created).toMatchObject({ isError: false, json: { title: 'No approval needed' } })
  })

  it('refuses a policy that puts crud_list behind approval', () => {
    expect(() =>
      createDataTools({
        database,
        models,
        access: { models: { notes: { approval: ['crud_list' as 'crud_delete'] } } },
      }),
    ).toThrow(/approval of notes: "crud_list" is not a write tool/)
  })
})
