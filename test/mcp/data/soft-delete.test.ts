import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { silentLogger } from '../../../src/core/index.ts'
import { createModelRegistry, type Database } from '../../../src/db/index.ts'
import { createDataTools, createMcpServer } from '../../../src/mcp/index.ts'
import * as pgSchema from '../../fixtures/trash/postgres/schema.ts'
import * as sqliteSchema from '../../fixtures/trash/sqlite/schema.ts'
import { describeEachDatabase, type TestDatabase } from '../../support/databases.ts'
import { call, connectInMemory, ok } from '../support/client.ts'

type Row = Record<string, unknown>
const fixtures = resolve(import.meta.dirname, '../../fixtures/trash')

describeEachDatabase('MCP data tools on a model with deleted_at (soft delete)', (backend) => {
  let test: TestDatabase
  let database: Database
  let client: Client

  beforeAll(async () => {
    test = await backend.create()
    database = test.database
    const ddl = readFileSync(join(fixtures, backend.dialect, 'migrations/0001_init.sql'), 'utf8')
    for (const statement of ddl.split('--> statement-breakpoint')) {
      if (database.dialect === 'postgres') await database.db.execute(sql.raw(statement))
      else database.db.run(sql.raw(statement))
    }
    const schema = backend.dialect === 'postgres' ? pgSchema : sqliteSchema
    const tools = createDataTools({
      database,
      models: createModelRegistry(schema, database.dialect),
      // Soft delete itself; approvals hold a deletion before it (approvals*.test.ts).
      access: { unlisted: 'all', approval: [] },
      logger: silentLogger(),
    })
    client = await connectInMemory(createMcpServer({ dataTools: { tools } }))
  })
  afterAll(async () => {
    await client?.close()
    await test?.cleanup()
  })

  const list = async () =>
    (await ok<{ records: Row[]; total: number }>(client, 'crud_list', { model: 'documents' }))
      .records
  const create = (title: string) =>
    ok<Row>(client, 'crud_create', { model: 'documents', data: { title } })

  it('crud_delete sets deleted_at; crud_list hides the record; the row stays', async () => {
    const kept = await create('Kept')
    const gone = await create('Gone')
    const deleted = await ok(client, 'crud_delete', { model: 'documents', id: gone.id })
    expect(deleted).toMatchObject({ message: 'Deleted' })
    const ids = (await list()).map((row) => row.id)
    expect(ids).toContain(kept.id)
    expect(ids).not.toContain(gone.id)
    const rows =
      database.dialect === 'postgres'
        ? (await database.db.execute(sql`SELECT deleted_at FROM documents WHERE id = ${gone.id}`))
            .rows
        : database.db.all(sql`SELECT deleted_at FROM documents WHERE id = ${gone.id}`)
    expect(rows).toHaveLength(1)
    expect((rows[0] as Row).deleted_at).not.toBeNull()
  })

  it('a trashed record can be neither updated nor deleted again', async () => {
    const doc = await create('Once')
    await ok(client, 'crud_delete', { model: 'documents', id: doc.id })
    const update = await call(client, 'crud_update', {
      model: 'documents',
      id: doc.id,
      data: { title: 'Twice' },
    })
    expect(update.isError).toBe(true)
    expect(update.text).toMatch(/No documents record/)
    const again = await call(client, 'crud_delete', { model: 'documents', id: doc.id })
    expect(again.isError).toBe(true)
  })

  it('deleted_at is not writable through the tools', async () => {
    const outcome = await call(client, 'crud_create', {
      model: 'documents',
      data: { title: 'Sneaky', deleted_at: new Date().toISOString() },
    })
    expect(outcome.isError).toBe(true)
    expect(outcome.text).toMatch(/deleted_at/)
  })

  it('crud_aggregate counts, groups and reads extremes of what crud_list shows, never the trash', async () => {
    for (const title of ['Seen 1', 'Seen 2']) await create(title)
    const hidden = await create('Hidden')
    await ok(client, 'crud_delete', { model: 'documents', id: hidden.id })
    type Groups = { data: Array<{ group: Row; count?: number; min?: Row }> }
    const listed = await ok<{ total: number }>(client, 'crud_list', { model: 'documents' })
    const counted = await ok<Groups>(client, 'crud_aggregate', {
      model: 'documents',
      count: true,
    })
    expect(counted.data).toEqual([{ group: {}, count: listed.total }])
    const byTitle = await ok<Groups>(client, 'crud_aggregate', {
      model: 'documents',
      group_by: ['title'],
    })
    expect(byTitle.data.map((g) => g.group.title)).not.toContain('Hidden')
    expect(byTitle.data.map((g) => g.group.title)).toContain('Seen 1')
    // "Gone" and "Hidden" sort first, and are in the trash: the smallest title shown is "Kept".
    const extremes = await ok<Groups>(client, 'crud_aggregate', {
      model: 'documents',
      min: ['title'],
    })
    expect(extremes.data[0]!.min).toEqual({ title: 'Kept' })
  })
})
