import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { silentLogger } from '../../src/core/index.ts'
import { createModelRegistry } from '../../src/db/index.ts'
import { createMcpServer } from '../../src/mcp/index.ts'
import { type QueryApp, startQueryApp } from '../api/query/support.ts'
import { describeEachDatabase } from '../support/databases.ts'
import { call, connectInMemory, ok } from './support/client.ts'

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
  let client: Client
  const TOTAL = 30

  beforeAll(async () => {
    q = await startQueryApp(backend)
    await q.seed(TOTAL)
    const models = createModelRegistry(q.schema, backend.dialect)
    const server = createMcpServer({
      data: { database: q.database, models, logger: silentLogger() },
    })
    client = await connectInMemory(server)
  })
  afterAll(async () => {
    await client?.close()
    await q?.close()
  })

  const list = (args: Record<string, unknown>) =>
    ok<Page>(client, 'crud_list', { model: 'posts', ...args })

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
    expect((await list({ search: 'POTTERY' })).total).toBe(TOTAL / 3)
  })

  it('includes related records from the foreign keys, without sensitive fields', async () => {
    const page = await list({ include: ['author'], per_page: 5 })
    for (const record of page.records) {
      expect((record.author as Row).id).toBe(record.author_id)
      expect(record.author as Row).not.toHaveProperty('password_hash')
    }
    const users = await ok<Page>(client, 'crud_list', { model: 'users', include: ['posts'] })
    expect(users.records.every((user) => (user.posts as Row[]).length === 10)).toBe(true)
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
  })

  it('rejects bad arguments as tool errors naming them', async () => {
    const bad = await call(client, 'crud_list', {
      model: 'posts',
      filters: { id: { gt: 'x' } },
      sort: 'nope',
    })
    expect(bad.isError).toBe(true)
    expect(bad.text).toMatch(/filter\[id\]\[gt\]: must be a whole number/)
    expect(bad.text).toMatch(/sort: "nope" is not a sortable field/)
    const sensitive = await call(client, 'crud_list', {
      model: 'users',
      filters: { password_hash: { starts_with: 'x' } },
    })
    expect(sensitive.text).toMatch(/Unknown filter field/)
    const op = await call(client, 'crud_list', { model: 'posts', filters: { id: { like: 1 } } })
    expect(op.text).toMatch(/Input validation error/)
  })
})
