import { getTableColumns, sql } from 'drizzle-orm'
import { numeric, pgTable, text as pgText } from 'drizzle-orm/pg-core'
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildListQuery } from '../../../src/api/query/definition.ts'
import { planListQuery } from '../../../src/api/query/plan.ts'
import { requestSchema } from '../../../src/cli/scaffold/api/fields.ts'
import { silentLogger } from '../../../src/core/index.ts'
import { createDatabase, createModelRegistry, type SqliteDatabase } from '../../../src/db/index.ts'
import { describeColumn } from '../../../src/db/models/columns.ts'
import { coerceValue } from '../../../src/mcp/data/values.ts'
import { createCrud, createDataTools, createMcpServer } from '../../../src/mcp/index.ts'
import { connectInMemory } from '../support/client.ts'

// Each reader of a column's type reads it through classifyColumn; these are the columns on
// which the readers' own regexes over the SQL type had drifted apart.
const jobs = sqliteTable('jobs', {
  id: integer('id').primaryKey(),
  title: text('title').notNull(),
  status: text('status', { enum: ['queued', 'done'] }).notNull(),
  bytes: integer('bytes').notNull(),
  meta: text('meta', { mode: 'json' }),
})

describe('the data tools on SQLite columns', () => {
  let database: SqliteDatabase

  beforeAll(async () => {
    database = (await createDatabase('sqlite::memory:')) as SqliteDatabase
    database.db.run(
      sql`CREATE TABLE jobs (id INTEGER PRIMARY KEY, title TEXT NOT NULL, status TEXT NOT NULL, bytes INTEGER NOT NULL, meta TEXT)`,
    )
  })
  afterAll(async () => {
    await database.close()
  })

  const crud = () =>
    createCrud({
      database,
      models: createModelRegistry({ jobs }, 'sqlite'),
      access: { unlisted: 'all' },
      logger: silentLogger(),
    })

  it('lists a model with an enum kept as text (an enum is not searched as text)', async () => {
    await crud().create({ model: 'jobs', data: { title: 'backup', status: 'queued', bytes: 1 } })
    expect(await crud().list({ model: 'jobs' })).toMatchObject({ total: 1 })
  })

  it('describes a JSON column kept as text as any JSON value, not a string', async () => {
    const tools = createDataTools({
      database,
      models: createModelRegistry({ jobs }, 'sqlite'),
      access: { unlisted: 'all' },
      logger: silentLogger(),
    })
    const client = await connectInMemory(createMcpServer({ dataTools: { tools } }))
    try {
      const { contents } = await client.readResource({ uri: 'kiln://models/jobs' })
      const schema = JSON.parse((contents[0] as { text: string }).text) as {
        properties: Record<string, Record<string, unknown>>
      }
      expect(schema.properties.meta).not.toHaveProperty('type')
      expect(schema.properties.title).toMatchObject({ type: 'string' })
    } finally {
      await client.close()
    }
  })

  it('writes an integer beyond 32 bits: every SQLite integer is 64-bit', async () => {
    const created = await crud().create({
      model: 'jobs',
      data: { title: 'archive', status: 'done', bytes: 5_000_000_000 },
    })
    expect(created).toMatchObject({ bytes: 5_000_000_000 })
  })
})

describe('numeric arrays', () => {
  const prices = pgTable('prices', {
    name: pgText('name').primaryKey(),
    steps: numeric('steps', { precision: 10, scale: 2 }).array().notNull(),
  })
  const info = describeColumn('steps', getTableColumns(prices).steps, 'postgres', {
    inPrimaryKey: false,
    singlePrimaryKey: true,
  })

  it('are arrays to the data tools, not one numeric', () => {
    expect(coerceValue(info, ['1.50', 2])).toEqual(['1.50', 2])
  })

  it('are arrays of decimals in the generated requests', () => {
    expect(requestSchema(info, 'postgres', 'NewPrice', 'prices')).toBe(
      'z.array(decimal({ precision: 10, scale: 2 }))',
    )
  })
})

describe('list filters on SQLite integers', () => {
  const definition = buildListQuery(jobs, { fields: ['id', 'bytes'], filter: ['bytes'] })
  const plan = (query: string) => planListQuery(definition, new URLSearchParams(query), {})

  it('take values beyond 32 bits, as SQLite keeps them', () => {
    expect(plan('filter[bytes][gt]=5000000000').filters[0]).toMatchObject({
      values: [5_000_000_000],
    })
  })
})
