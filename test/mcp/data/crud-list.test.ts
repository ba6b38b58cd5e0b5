import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { silentLogger } from '../../../src/core/index.ts'
import { createModelRegistry, type Database } from '../../../src/db/index.ts'
import {
  createDataTools,
  createMcpServer,
  type McpAccessOptions,
  type McpCaller,
  type McpModelSource,
} from '../../../src/mcp/index.ts'
import { type QueryApp, startQueryApp } from '../../api/query/support.ts'
import { describeEachDatabase, type TestDatabase } from '../../support/databases.ts'
import { call, connectInMemory, ok } from '../support/client.ts'
import { createTestTables, schemaFor } from '../support/schema.ts'

type Row = Record<string, unknown>
interface Page {
  records: Row[]
  total: number | null
  page: number | null
  per_page: number
  next_cursor?: string | null
  prev_cursor?: string | null
}

describeEachDatabase('crud_list speaks the REST list grammar', (backend) => {
  let q: QueryApp
  let models: McpModelSource
  let client: Client
  const clients: Client[] = []
  const TOTAL = 30

  // These tests read unlisted models (the default is none): they say so once here.
  async function connect(access: McpAccessOptions, caller?: McpCaller): Promise<Client> {
    const tools = createDataTools({
      database: q.database,
      models,
      access: { unlisted: 'read', ...access },
      logger: silentLogger(),
    })
    const connected = await connectInMemory(createMcpServer({ dataTools: { tools, caller } }))
    clients.push(connected)
    return connected
  }

  beforeAll(async () => {
    q = await startQueryApp(backend)
    await q.seed(TOTAL)
    models = createModelRegistry(q.schema, backend.dialect)
    client = await connect({})
  })
  afterAll(async () => {
    for (const connected of clients) await connected.close()
    await q?.close()
  })

  const list = (args: Record<string, unknown>, on: Client = client) =>
    ok<Page>(on, 'crud_list', { model: 'posts', ...args })

  it('documents the grammar in its input schema', async () => {
    const { tools } = await client.listTools()
    const schema = tools.find((tool) => tool.name === 'crud_list')!.inputSchema
    const properties = schema.properties as Record<string, { description?: string }>
    expect(Object.keys(properties)).toEqual([
      'model',
      'filters',
      'sort',
      'fields',
      'include',
      'search',
      'cursor',
      'count',
      'page',
      'per_page',
    ])
    expect(properties.filters!.description).toMatch(/icontains/)
    expect(JSON.stringify(properties.filters)).toContain('not_in')
    expect(JSON.stringify(properties.count)).toContain('estimated')
  })

  it('filters with operators, sorts, selects fields and counts the filtered rows', async () => {
    const page = await list({
      filters: { title: { icontains: 'kiln' }, token_count: { between: [1, 3] }, published: true },
      sort: '-created_at,title',
      fields: ['id', 'title', 'created_at'],
      per_page: 100,
    })
    expect(page.records.length).toBeGreaterThan(0)
    expect(page.total).toBe(page.records.length)
    expect(Object.keys(page.records[0]!)).toEqual(['id', 'title', 'created_at'])
    const dates = page.records.map((r) => r.created_at as string)
    expect([...dates].sort().reverse()).toEqual(dates)
    expect(page).toMatchObject({ page: 1, per_page: 100 })
    const inList = await list({ filters: { id: { in: [1, 2, 3] } } })
    expect(inList.records.map((r) => r.id)).toEqual([1, 2, 3])
    const notIn = await list({ filters: { id: { not_in: [1, 2] }, body: { null: false } } })
    expect(notIn.total).toBe(TOTAL - 2)
    expect((await list({ search: 'POTTERY' })).total).toBe(TOTAL / 3)
    const capped = await list({ per_page: 1e30 })
    expect(capped).toMatchObject({ per_page: 100, total: TOTAL, page: 1 })
  })

  it('includes related records from the foreign keys, without credential fields', async () => {
    const page = await list({ include: ['author'], per_page: 5 })
    for (const record of page.records) {
      expect((record.author as Row).id).toBe(record.author_id)
      expect(record.author as Row).not.toHaveProperty('password_hash')
    }
    const users = await ok<Page>(client, 'crud_list', { model: 'users', include: ['posts'] })
    expect(users.records.every((user) => (user.posts as Row[]).length === 10)).toBe(true)
  })

  it('never lets include reach a model the policy hides, nor unreadable fields of one it shows', async () => {
    const hidden = await connect({ unlisted: 'none', models: { posts: {} } })
    const refused = await call(hidden, 'crud_list', { model: 'posts', include: ['author'] })
    expect(refused.isError).toBe(true)
    expect(refused.text).toMatch(/include: "author" is not a relation; relations: \(none\)/)
    const narrow = await connect({ models: { users: { read: ['id', 'name'] } } })
    const page = await list({ include: ['author'], per_page: 3 }, narrow)
    for (const record of page.records)
      expect(Object.keys(record.author as Row)).toEqual(['id', 'name'])
    // A key the caller cannot read gives no relation either.
    const keyless = await connect({ models: { posts: { read: ['id', 'title'] } } })
    const noKey = await call(keyless, 'crud_list', { model: 'posts', include: ['author'] })
    expect(noKey.text).toMatch(/"author" is not a relation/)
  })

  it('filters, sorts and searches on readable fields only', async () => {
    const narrow = await connect({ models: { posts: { read: ['id', 'title'] } } })
    const filter = await call(narrow, 'crud_list', {
      model: 'posts',
      filters: { published: { eq: true } },
    })
    expect(filter.text).toMatch(
      /Unknown filter field\(s\) for posts: "published"\. Valid fields: id, title/,
    )
    const sort = await call(narrow, 'crud_list', { model: 'posts', sort: '-created_at' })
    expect(sort.text).toMatch(/sort: "-created_at" is not a sortable field; sortable: id, title/)
    const fields = await call(narrow, 'crud_list', { model: 'posts', fields: ['body'] })
    expect(fields.isError).toBe(true)
    expect(fields.text).toMatch(/fields/)
    const page = await list({ per_page: 2 }, narrow)
    expect(Object.keys(page.records[0]!)).toEqual(['id', 'title'])
    const credential = await call(client, 'crud_list', {
      model: 'users',
      filters: { password_hash: { starts_with: 'x' } },
    })
    expect(credential.text).toMatch(/Unknown filter field\(s\) for users: "password_hash"/)
    const credentialSort = await call(client, 'crud_list', {
      model: 'users',
      sort: 'password_hash',
    })
    expect(credentialSort.isError).toBe(true)
  })

  it('fails closed for a tenant: an include of a model without tenants is refused', async () => {
    const tenant = await connect({ models: { posts: { global: true } } }, { tenantId: 'acme' })
    expect((await list({ per_page: 2 }, tenant)).records).toHaveLength(2)
    const refused = await call(tenant, 'crud_list', { model: 'posts', include: ['author'] })
    expect(refused).toMatchObject({
      isError: true,
      text: 'include: users is not available to tenants',
    })
  })

  it('pages by cursor and adds the cursors to the result', async () => {
    const seen: unknown[] = []
    let cursor: string | null | undefined = ''
    while (cursor !== null && cursor !== undefined) {
      const page: Page = await list({ cursor, per_page: 8, sort: 'title' })
      expect(page).toMatchObject({ page: null, per_page: 8, total: null })
      seen.push(...page.records.map((r) => r.id))
      cursor = page.next_cursor
    }
    const all = await list({ sort: 'title', per_page: 100 })
    expect(seen).toEqual(all.records.map((r) => r.id))
    expect((await list({ per_page: 5 })).next_cursor).toBeUndefined()
    const counted = await list({ cursor: '', count: 'exact', per_page: 5 })
    expect(counted.total).toBe(TOTAL)
    const tampered = await call(client, 'crud_list', { model: 'posts', cursor: 'not-a-cursor' })
    expect(tampered.text).toMatch(/cursor/)
  })

  it('rejects bad arguments as tool errors naming them, changing nothing', async () => {
    const before = await list({ per_page: 100 })
    const bad = await call(client, 'crud_list', {
      model: 'posts',
      filters: { id: { gt: 'x' } },
      sort: 'nope',
    })
    expect(bad.isError).toBe(true)
    expect(bad.text).toMatch(/filter\[id\]\[gt\]: must be a whole number/)
    expect(bad.text).toMatch(/sort: "nope" is not a sortable field/)
    const op = await call(client, 'crud_list', { model: 'posts', filters: { id: { like: 1 } } })
    expect(op.text).toMatch(/Input validation error/)
    const both = await call(client, 'crud_list', { model: 'posts', cursor: '', page: 2 })
    expect(both.text).toMatch(/page: cannot be combined with cursor/)
    const relation = await call(client, 'crud_list', { model: 'posts', include: ['nope'] })
    expect(relation.text).toMatch(/include: "nope" is not a relation/)
    expect(await list({ per_page: 100 })).toEqual(before)
  })
})

describeEachDatabase('crud_list keeps a tenant to its own rows', (backend) => {
  let test: TestDatabase
  let database: Database
  const clients: Client[] = []

  beforeAll(async () => {
    test = await backend.create()
    database = test.database
    await createTestTables(database)
    for (const [tenant, title, priority] of [
      ['tenant-a', 'A1', 1],
      ['tenant-a', 'A2', 2],
      ['tenant-b', 'B1', 3],
      ['tenant-b', 'B2', 4],
    ] as const) {
      const statement = sql`INSERT INTO notes (tenant_id, title, priority, created_at, updated_at) VALUES (${tenant}, ${title}, ${priority}, ${new Date().toISOString()}, ${new Date().toISOString()})`
      if (database.dialect === 'postgres') await database.db.execute(statement)
      else database.db.run(statement)
    }
  })
  afterAll(async () => {
    for (const connected of clients) await connected.close()
    await test.cleanup()
  })

  describe('with operators, sort and cursors', () => {
    it("never returns or counts another tenant's rows", async () => {
      const models = createModelRegistry(schemaFor(database), database.dialect)
      const tools = createDataTools({
        database,
        models,
        access: { unlisted: 'read' },
        logger: silentLogger(),
      })
      const b = await connectInMemory(
        createMcpServer({ dataTools: { tools, caller: { tenantId: 'tenant-b' } } }),
      )
      clients.push(b)
      const page = await ok<Page>(b, 'crud_list', {
        model: 'notes',
        filters: { priority: { gte: 1 } },
        sort: '-priority',
      })
      expect(page.records.map((r) => r.title)).toEqual(['B2', 'B1'])
      expect(page.total).toBe(2)
      const sneaky = await ok<Page>(b, 'crud_list', {
        model: 'notes',
        filters: { tenant_id: { in: ['tenant-a', 'tenant-b'] } },
        count: 'exact',
      })
      expect(sneaky.records.map((r) => r.tenant_id)).toEqual(['tenant-b', 'tenant-b'])
      const cursor = await ok<Page>(b, 'crud_list', { model: 'notes', cursor: '', per_page: 1 })
      const next = await ok<Page>(b, 'crud_list', {
        model: 'notes',
        cursor: cursor.next_cursor,
        per_page: 1,
      })
      expect([...cursor.records, ...next.records].map((r) => r.title)).toEqual(['B1', 'B2'])
      expect(next.next_cursor).toBeNull()
    })
  })
})
