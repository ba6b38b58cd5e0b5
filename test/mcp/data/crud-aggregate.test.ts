import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { silentLogger } from '../../../src/core/index.ts'
import { createModelRegistry } from '../../../src/db/index.ts'
import {
  createDataTools,
  createMcpServer,
  type McpAccessOptions,
  type McpModelSource,
} from '../../../src/mcp/index.ts'
import { items, pgItems, seedItems, sqliteItems } from '../../api/query/structured-schema.ts'
import { describeEachDatabase, type TestDatabase } from '../../support/databases.ts'
import { call, connectInMemory, ok } from '../support/client.ts'

type Row = Record<string, unknown>

/**
 * `crud_list` takes the richer filters (OR, arrays, JSON paths) and `crud_aggregate`, its
 * sibling under the same grant, answers the REST aggregates, over a model with array and JSON
 * columns.
 */
describeEachDatabase('crud_list filters and crud_aggregate', (backend) => {
  let test: TestDatabase
  let models: McpModelSource
  let client: Client
  const clients: Client[] = []

  async function connect(access: McpAccessOptions): Promise<Client> {
    const tools = createDataTools({
      database: test.database,
      models,
      access,
      logger: silentLogger(),
    })
    const connected = await connectInMemory(createMcpServer({ dataTools: { tools } }))
    clients.push(connected)
    return connected
  }

  beforeAll(async () => {
    test = await backend.create()
    await seedItems(test.database)
    const table = backend.dialect === 'postgres' ? pgItems : sqliteItems
    models = createModelRegistry({ items: table }, backend.dialect)
    client = await connect({ models: { items: { tools: ['crud_list'] } } })
  })
  afterAll(async () => {
    for (const connected of clients) await connected.close()
    await test?.cleanup()
  })

  const ids = (records: Row[]) => records.map((record) => record.id)

  it('crud_list: an OR list, contains on an array and a JSON path', async () => {
    const page = await ok<{ records: Row[]; total: number }>(client, 'crud_list', {
      model: 'items',
      filters: {
        or: [{ 'meta.color': 'red' }, { tags: { contains: ['power', 'kiln'] } }],
        published: true,
      },
      per_page: 100,
    })
    const expected = items.filter(
      (item) =>
        item.published &&
        (item.meta?.color === 'red' || ['power', 'kiln'].every((t) => item.tags.includes(t))),
    )
    expect(expected.length).toBeGreaterThan(0)
    expect(ids(page.records)).toEqual(expected.map((item) => item.id))
    expect(page.total).toBe(expected.length)
    const unknown = await call(client, 'crud_list', {
      model: 'items',
      filters: { or: [{ nope: 1 }], 'title.x': 'y' },
    })
    expect(unknown.text).toMatch(/Unknown filter field\(s\) for items: "nope", "title.x"/)
  })

  it('lists crud_aggregate beside crud_list, read-only', async () => {
    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name)).toEqual(['crud_list', 'crud_aggregate'])
    const tool = tools.find((one) => one.name === 'crud_aggregate')!
    expect(tool.annotations?.readOnlyHint).toBe(true)
    expect(Object.keys(tool.inputSchema.properties as object)).toEqual([
      'model',
      'filters',
      'search',
      'count',
      'sum',
      'avg',
      'min',
      'max',
      'group_by',
    ])
  })

  it('crud_aggregate: count, sum and max per group with filters', async () => {
    const answer = await ok<{ data: Row[]; meta: Row }>(client, 'crud_aggregate', {
      model: 'items',
      count: true,
      sum: ['token_count'],
      max: ['token_count'],
      group_by: ['author_id'],
      filters: { 'meta.size.name': 'large' },
    })
    const large = items.filter(
      (item) => (item.meta?.size as { name: string } | undefined)?.name === 'large',
    )
    const authors = [...new Set(large.map((item) => item.authorId))].sort()
    expect(authors.length).toBeGreaterThan(1)
    expect(answer).toEqual({
      data: authors.map((author) => {
        const mine = large.filter((item) => item.authorId === author)
        const counts = mine.flatMap((item) => (item.tokenCount === null ? [] : [item.tokenCount]))
        return {
          group: { author_id: author },
          count: mine.length,
          sum: { token_count: counts.reduce((a, b) => a + b, 0) },
          max: { token_count: Math.max(...counts) },
        }
      }),
      meta: { groups: authors.length, truncated: false },
    })
  })

  it('keeps to the readable fields and refuses credentials, as tool errors', async () => {
    const narrow = await connect({
      models: { items: { tools: ['crud_list'], read: ['id', 'title', 'author_id'] } },
    })
    const hidden = await call(narrow, 'crud_aggregate', { model: 'items', sum: ['token_count'] })
    expect(hidden).toMatchObject({ isError: true })
    expect(hidden.text).toMatch(
      /Invalid aggregate arguments for items: sum: "token_count" is not allowed; allowed: id, author_id/,
    )
    const credential = await call(client, 'crud_aggregate', {
      model: 'items',
      group_by: ['api_token'],
    })
    expect(credential.text).toMatch(/group_by: "api_token" is not allowed/)
    const counted = await ok<{ data: Row[] }>(narrow, 'crud_aggregate', { model: 'items' })
    expect(counted.data).toEqual([{ group: {}, count: items.length }])
  })

  it('is not offered without crud_list', async () => {
    const none = await connect({ unlisted: 'none', models: {} })
    const { tools } = await none.listTools()
    expect(tools.map((tool) => tool.name)).toEqual([])
  })
})
