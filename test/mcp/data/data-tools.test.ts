import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { silentLogger } from '../../../src/core/index.ts'
import { createModelRegistry, type Database } from '../../../src/db/index.ts'
import { createMcpServer, type McpCaller, type McpModelSource } from '../../../src/mcp/index.ts'
import { describeEachDatabase, type TestDatabase } from '../../support/databases.ts'
import { call, connectInMemory, ok, snapshot } from '../support/client.ts'
import { createTestTables, insertUser, resetTestTables, schemaFor } from '../support/schema.ts'

type Row = Record<string, unknown>
type Page = { records: Row[]; total: number; page: number; per_page: number }

describeEachDatabase('MCP data tools over the in-memory transport', (backend) => {
  let test: TestDatabase
  let database: Database
  let models: McpModelSource
  const clients: Client[] = []

  /** Every tool on every model, as the local stdio server allows. */
  async function connect(caller?: McpCaller): Promise<Client> {
    const server = createMcpServer({
      data: {
        database,
        models,
        caller,
        access: { unlisted: 'all', approval: [] },
        logger: silentLogger(),
      },
    })
    const client = await connectInMemory(server)
    clients.push(client)
    return client
  }

  beforeAll(async () => {
    test = await backend.create()
    database = test.database
    await createTestTables(database)
    models = createModelRegistry(schemaFor(database), database.dialect)
  })

  afterAll(async () => {
    await test.cleanup()
  })

  beforeEach(async () => {
    await resetTestTables(database)
  })

  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close()
  })

  it('lists the four tools with real JSON input schemas', async () => {
    const client = await connect()
    const { tools } = await client.listTools()
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]))
    expect(Object.keys(byName).sort()).toEqual([
      'crud_aggregate',
      'crud_create',
      'crud_delete',
      'crud_list',
      'crud_update',
    ])
    const list = byName.crud_list!.inputSchema
    expect(list.type).toBe('object')
    expect(list.required).toEqual(['model'])
    expect(list.properties).toMatchObject({
      model: { type: 'string' },
      filters: { type: 'object' },
      page: { type: 'integer', minimum: 1 },
      per_page: { type: 'integer', minimum: 1 },
    })
    expect(
      (list.properties as Record<string, { description: string }>).model?.description,
    ).toContain('notes, users')
    expect(byName.crud_create!.inputSchema.required).toEqual(['model', 'data'])
    expect(byName.crud_update!.inputSchema.required).toEqual(['model', 'id', 'data'])
    expect(byName.crud_delete!.inputSchema.required).toEqual(['model', 'id'])
  })

  it('creates a record, and never writes a credential field', async () => {
    const client = await connect()
    const created = await ok(client, 'crud_create', {
      model: 'notes',
      data: { tenant_id: 't', title: 'Hello' },
    })
    expect(created).toMatchObject({ id: 1, tenant_id: 't', title: 'Hello' })
    expect(typeof created.created_at).toBe('string')
    expect(Number.isNaN(Date.parse(created.created_at as string))).toBe(false)
    const before = await snapshot(database)
    const withHash = await call(client, 'crud_create', {
      model: 'users',
      data: { email: 'eve@example.com', name: 'Eve', password_hash: 'scrypt$chosen' },
    })
    expect(withHash.isError).toBe(true)
    expect(withHash.text).toMatch(/Unknown field\(s\) for create on users: "password_hash"/)
    const withoutHash = await call(client, 'crud_create', {
      model: 'users',
      data: { email: 'eve@example.com', name: 'Eve' },
    })
    expect(withoutHash.text).toMatch(/Missing required field\(s\) for users: password_hash/)
    expect(await snapshot(database)).toEqual(before)
  })

  it('lists, updates and deletes a record, never showing a credential field', async () => {
    const client = await connect()
    const created = await insertUser(database, 'ada@example.com', 'Ada')
    await insertUser(database, 'bob@example.com', 'Bob')
    const page = await ok<Page>(client, 'crud_list', { model: 'users' })
    expect(page).toMatchObject({ total: 2, page: 1, per_page: 15 })
    expect(page.records.map((r) => r.email)).toEqual(['ada@example.com', 'bob@example.com'])
    for (const record of page.records) expect(record).not.toHaveProperty('password_hash')

    const filtered = await ok<Page>(client, 'crud_list', {
      model: 'users',
      filters: { name: 'Bob' },
    })
    expect(filtered.total).toBe(1)
    expect(filtered.records[0]!.email).toBe('bob@example.com')

    const updated = await ok(client, 'crud_update', {
      model: 'users',
      id: created.id,
      data: { name: 'Ada Lovelace' },
    })
    expect(updated).toMatchObject({ id: 1, name: 'Ada Lovelace', email: 'ada@example.com' })
    expect(updated).not.toHaveProperty('password_hash')
    const rewrite = await call(client, 'crud_update', {
      model: 'users',
      id: created.id,
      data: { password_hash: 'scrypt$chosen' },
    })
    expect(rewrite.text).toMatch(/Unknown field\(s\) for update on users: "password_hash"/)

    // A string id is read as the primary key's type.
    const deleted = await ok(client, 'crud_delete', { model: 'users', id: '1' })
    expect(deleted).toEqual({ message: 'Deleted', id: '1' })
    const after = await ok<Page>(client, 'crud_list', { model: 'users' })
    expect(after.records.map((r) => r.id)).toEqual([2])
  })

  it('fills created_at and updated_at when the model has no default for them', async () => {
    const client = await connect()
    const before = Date.now() - 1000
    const note = await ok(client, 'crud_create', {
      model: 'notes',
      data: { tenant_id: 't1', title: 'First' },
    })
    expect(Date.parse(note.created_at as string)).toBeGreaterThanOrEqual(before)
    expect(note).toMatchObject({ pinned: false, priority: 0, body: null, token_count: 0 })
    const updated = await ok(client, 'crud_update', {
      model: 'notes',
      id: note.id,
      data: { pinned: true, priority: 3, body: 'text' },
    })
    expect(updated).toMatchObject({ pinned: true, priority: 3, body: 'text' })
    expect(Date.parse(updated.updated_at as string)).toBeGreaterThanOrEqual(
      Date.parse(note.updated_at as string),
    )
  })

  it('refuses caller-set timestamps (as REST does) and takes model names in other spellings', async () => {
    const client = await connect()
    const dated = await call(client, 'crud_create', {
      model: 'NOTES',
      data: { tenant_id: 't1', title: 'Dated', created_at: '1999-01-02T03:04:05.000Z' },
    })
    expect(dated.text).toMatch(/Unknown field\(s\) for create on notes: "created_at"/)
    const note = await ok(client, 'crud_create', {
      model: 'Notes',
      data: { tenant_id: 't1', title: 'Dated' },
    })
    const moved = await call(client, 'crud_update', {
      model: 'notes',
      id: note.id,
      data: { updated_at: '1999-01-02T03:04:05.000Z' },
    })
    expect(moved.text).toMatch(/Unknown field\(s\) for update on notes: "updated_at"/)
  })

  it('pages with total, caps per_page at 100 and filters on NULL', async () => {
    const client = await connect()
    for (let i = 1; i <= 105; i++) {
      await ok(client, 'crud_create', {
        model: 'notes',
        data: { tenant_id: 't1', title: `Note ${i}`, body: i % 2 === 0 ? 'even' : null },
      })
    }
    const second = await ok<Page>(client, 'crud_list', { model: 'notes', page: 2, per_page: 10 })
    expect(second).toMatchObject({ total: 105, page: 2, per_page: 10 })
    expect(second.records.map((r) => r.title)).toEqual(
      Array.from({ length: 10 }, (_, i) => `Note ${i + 11}`),
    )
    const capped = await ok<Page>(client, 'crud_list', { model: 'notes', per_page: 1000 })
    expect(capped.per_page).toBe(100)
    expect(capped.records).toHaveLength(100)
    // However large: beyond a safe integer too, per_page is capped, not refused.
    for (const huge of [9007199254740992, 1e20, 1e300]) {
      const page = await ok<Page>(client, 'crud_list', { model: 'notes', per_page: huge })
      expect(page).toMatchObject({ total: 105, page: 1, per_page: 100 })
      expect(page.records).toHaveLength(100)
    }
    const fractional = await call(client, 'crud_list', { model: 'notes', per_page: 1.5 })
    expect(fractional.isError).toBe(true)
    const beyond = await ok<Page>(client, 'crud_list', { model: 'notes', page: 50 })
    expect(beyond).toMatchObject({ records: [], total: 105, page: 50 })
    const nulls = await ok<Page>(client, 'crud_list', {
      model: 'notes',
      filters: { body: null },
      per_page: 100,
    })
    expect(nulls.total).toBe(53)
    const typed = await ok<Page>(client, 'crud_list', {
      model: 'notes',
      filters: { pinned: false, priority: 0, title: 'Note 7' },
    })
    expect(typed.records.map((r) => r.title)).toEqual(['Note 7'])
  })

  it('stores SQL-looking values literally', async () => {
    const client = await connect()
    const title = "x'); DROP TABLE notes; --"
    const note = await ok(client, 'crud_create', {
      model: 'notes',
      data: { tenant_id: 't1', title },
    })
    expect(note.title).toBe(title)
    const found = await ok<Page>(client, 'crud_list', {
      model: 'notes',
      filters: { title: "' OR '1'='1" },
    })
    expect(found.total).toBe(0)
    const all = await ok<Page>(client, 'crud_list', { model: 'notes', filters: { title } })
    expect(all.records.map((r) => r.id)).toEqual([note.id])
  })

  describe('bad input gives a tool error and changes nothing', () => {
    let client: Client
    let noteId: unknown

    beforeEach(async () => {
      client = await connect()
      await insertUser(database, 'ada@example.com', 'Ada')
      await insertUser(database, 'bob@example.com', 'Bob')
      noteId = (
        await ok(client, 'crud_create', { model: 'notes', data: { tenant_id: 't', title: 'Keep' } })
      ).id
    })

    const cases: Array<[string, string, Record<string, unknown>, RegExp]> = [
      [
        'unknown model',
        'crud_list',
        { model: 'secrets' },
        /Unknown model "secrets"\. Valid models: notes, users/,
      ],
      [
        'unknown model on create',
        'crud_create',
        { model: 'nope', data: {} },
        /Valid models: notes, users/,
      ],
      [
        'unknown model on update',
        'crud_update',
        { model: 'nope', id: 1, data: { a: 1 } },
        /Unknown model/,
      ],
      ['unknown model on delete', 'crud_delete', { model: 'nope', id: 1 }, /Unknown model/],
      ['missing model', 'crud_list', {}, /Input validation error/],
      ['model of the wrong type', 'crud_list', { model: 42 }, /Input validation error/],
      [
        'data that is not an object',
        'crud_create',
        { model: 'notes', data: 'title=x' },
        /Input validation error/,
      ],
      [
        'data that is an array',
        'crud_create',
        { model: 'notes', data: [1, 2] },
        /Input validation error/,
      ],
      [
        'unknown field',
        'crud_create',
        { model: 'notes', data: { tenant_id: 't', title: 'a', colour: 'red' } },
        /Unknown field\(s\) for create on notes: "colour"\. Valid fields: tenant_id, title, body, pinned, priority, token_count$/,
      ],
      [
        'SQL-looking field name',
        'crud_create',
        {
          model: 'notes',
          data: { tenant_id: 't', 'title) VALUES (1); DROP TABLE notes; --': 'x' },
        },
        /Unknown field/,
      ],
      [
        'setting the generated id',
        'crud_create',
        { model: 'notes', data: { id: 99, tenant_id: 't', title: 'a' } },
        /Unknown field\(s\) for create on notes: "id"/,
      ],
      [
        'missing required fields',
        'crud_create',
        { model: 'notes', data: { body: 'b' } },
        /Missing required field\(s\) for notes: tenant_id, title$/,
      ],
      [
        'a string where a number belongs',
        'crud_create',
        { model: 'notes', data: { tenant_id: 't', title: 'a', priority: 'high' } },
        /priority: must be a number/,
      ],
      [
        'a fraction for an integer',
        'crud_create',
        { model: 'notes', data: { tenant_id: 't', title: 'a', priority: 1.5 } },
        /priority: must be an integer/,
      ],
      // A Postgres integer is 32-bit; every SQLite integer 64-bit (any safe integer fits).
      ...(backend.name === 'postgres'
        ? [
            [
              'an integer out of range',
              'crud_create',
              { model: 'notes', data: { tenant_id: 't', title: 'a', priority: 2 ** 40 } },
              /priority: must be between/,
            ] satisfies [string, string, Record<string, unknown>, RegExp],
          ]
        : []),
      [
        'a number where a string belongs',
        'crud_create',
        { model: 'notes', data: { tenant_id: 't', title: 12 } },
        /title: must be a string/,
      ],
      [
        'a string where a boolean belongs',
        'crud_create',
        { model: 'notes', data: { tenant_id: 't', title: 'a', pinned: 'yes' } },
        /pinned: must be a boolean/,
      ],
      [
        'a bad date',
        'crud_create',
        { model: 'notes', data: { tenant_id: 't', title: 'a', created_at: 'yesterday' } },
        /Unknown field\(s\) for create on notes: "created_at"/,
      ],
      [
        'null in a required column',
        'crud_create',
        { model: 'notes', data: { tenant_id: 't', title: null } },
        /title: must not be null/,
      ],
      [
        'a string over its length',
        'crud_create',
        { model: 'notes', data: { tenant_id: 't', title: 'x'.repeat(101) } },
        /title: must be at most 100 characters/,
      ],
      [
        'an object as a value',
        'crud_create',
        { model: 'notes', data: { tenant_id: 't', title: { $ne: null } } },
        /title: must be a string/,
      ],
      [
        'a duplicate unique value',
        'crud_update',
        { model: 'users', id: 2, data: { email: 'ada@example.com' } },
        /^Could not update users: a record with the same email already exists$/,
      ],
      [
        'unknown filter field',
        'crud_list',
        { model: 'notes', filters: { colour: 'red' } },
        /Unknown filter field\(s\) for notes: "colour"\. Valid fields: id, tenant_id/,
      ],
      [
        'SQL-looking filter key',
        'crud_list',
        { model: 'notes', filters: { '1=1 OR title': 'x' } },
        /Unknown filter field\(s\) for notes: "1=1 OR title"/,
      ],
      [
        'filter on a sensitive field',
        'crud_list',
        { model: 'users', filters: { password_hash: 'h' } },
        /Unknown filter field\(s\) for users: "password_hash"/,
      ],
      [
        'filter value of the wrong type',
        'crud_list',
        { model: 'notes', filters: { priority: 'high' } },
        /Invalid list arguments for notes: filter\[priority\]: must be a whole number/,
      ],
      [
        'filter value that is an object',
        'crud_list',
        { model: 'notes', filters: { title: { like: '%' } } },
        /Input validation error/,
      ],
      ['zero per_page', 'crud_list', { model: 'notes', per_page: 0 }, /Input validation error/],
      ['negative page', 'crud_list', { model: 'notes', page: -1 }, /Input validation error/],
      ['fractional page', 'crud_list', { model: 'notes', page: 1.5 }, /Input validation error/],
      [
        'page as text',
        'crud_list',
        { model: 'notes', page: '2; DROP TABLE notes' },
        /Input validation error/,
      ],
      [
        'id of the wrong type',
        'crud_update',
        { model: 'notes', id: 'abc', data: { title: 'x' } },
        /id: must be a number/,
      ],
      ['SQL-looking id', 'crud_delete', { model: 'notes', id: '1 OR 1=1' }, /id: must be a number/],
      [
        'id as an object',
        'crud_delete',
        { model: 'notes', id: { gt: 0 } },
        /Input validation error/,
      ],
      [
        'unknown id on update',
        'crud_update',
        { model: 'notes', id: 999, data: { title: 'x' } },
        /No notes record with id 999/,
      ],
      [
        'unknown id on delete',
        'crud_delete',
        { model: 'notes', id: 999 },
        /No notes record with id 999/,
      ],
      ['empty update', 'crud_update', { model: 'notes', id: 1, data: {} }, /at least one field/],
      [
        'changing the primary key',
        'crud_update',
        { model: 'notes', id: 1, data: { id: 5 } },
        /primary key and cannot be changed/,
      ],
      [
        'wrong type on update',
        'crud_update',
        { model: 'notes', id: 1, data: { pinned: 1 } },
        /pinned: must be a boolean/,
      ],
      [
        'unknown field on update',
        'crud_update',
        { model: 'notes', id: 1, data: { 'title = title; --': 'x' } },
        /Unknown field\(s\) for update on notes/,
      ],
    ]

    for (const [title, tool, args, message] of cases) {
      it(title, async () => {
        const before = await snapshot(database)
        const outcome = await call(client, tool, args)
        expect(outcome.isError).toBe(true)
        expect(outcome.text).toMatch(message)
        expect(await snapshot(database)).toEqual(before)
        expect(noteId).toBe(1)
      })
    }

    it('never echoes a value of a failed statement', async () => {
      const outcome = await call(client, 'crud_update', {
        model: 'users',
        id: 2,
        data: { email: 'ada@example.com', name: 'very-secret-name' },
      })
      expect(outcome.isError).toBe(true)
      expect(outcome.text).not.toContain('very-secret-name')
      expect(outcome.text).not.toContain('ada@example.com')
      expect(outcome.text).not.toMatch(/insert|params/i)
    })
  })

  describe('tenant scoping', () => {
    let a: Client
    let b: Client
    let admin: Client

    beforeEach(async () => {
      a = await connect({ userId: '1', tenantId: 'tenant-a' })
      b = await connect({ userId: '2', tenantId: 'tenant-b' })
      admin = await connect()
      await ok(a, 'crud_create', { model: 'notes', data: { title: 'A1' } })
      await ok(a, 'crud_create', { model: 'notes', data: { title: 'A2', tenant_id: 'tenant-a' } })
      await ok(b, 'crud_create', { model: 'notes', data: { title: 'B1' } })
    })

    it('writes the caller tenant and lists only its rows', async () => {
      const all = await ok<Page>(admin, 'crud_list', { model: 'notes' })
      expect(all.records.map((r) => [r.title, r.tenant_id])).toEqual([
        ['A1', 'tenant-a'],
        ['A2', 'tenant-a'],
        ['B1', 'tenant-b'],
      ])
      const pageA = await ok<Page>(a, 'crud_list', { model: 'notes' })
      expect(pageA.total).toBe(2)
      expect(pageA.records.map((r) => r.title)).toEqual(['A1', 'A2'])
      const pageB = await ok<Page>(b, 'crud_list', { model: 'notes' })
      expect(pageB.records.map((r) => r.title)).toEqual(['B1'])
      // A filter on another tenant finds nothing rather than widening the scope.
      const sneaky = await ok<Page>(b, 'crud_list', {
        model: 'notes',
        filters: { tenant_id: 'tenant-a' },
      })
      expect(sneaky).toMatchObject({ total: 0, records: [] })
    })

    it("cannot create, update or delete another tenant's rows", async () => {
      const before = await snapshot(database)
      const create = await call(b, 'crud_create', {
        model: 'notes',
        data: { title: 'forged', tenant_id: 'tenant-a' },
      })
      expect(create.isError).toBe(true)
      expect(create.text).toMatch(/tenant_id must be your own tenant/)
      const update = await call(b, 'crud_update', {
        model: 'notes',
        id: 1,
        data: { title: 'mine' },
      })
      expect(update).toMatchObject({ isError: true, text: 'No notes record with id 1' })
      const move = await call(a, 'crud_update', {
        model: 'notes',
        id: 1,
        data: { tenant_id: 'tenant-b' },
      })
      expect(move.isError).toBe(true)
      expect(move.text).toMatch(/tenant_id must be your own tenant/)
      const remove = await call(b, 'crud_delete', { model: 'notes', id: 2 })
      expect(remove).toMatchObject({ isError: true, text: 'No notes record with id 2' })
      expect(await snapshot(database)).toEqual(before)
      // Their own rows they can change.
      await ok(b, 'crud_update', { model: 'notes', id: 3, data: { title: 'B1 edited' } })
      await ok(a, 'crud_delete', { model: 'notes', id: 1 })
    })

    it('refuses a tenant every model without a tenant column (fails closed)', async () => {
      await insertUser(database, 'shared@example.com', 'S')
      const seen = await call(b, 'crud_list', { model: 'users' })
      expect(seen).toMatchObject({ isError: true, text: 'users is not available to tenants' })
      const all = await ok<Page>(admin, 'crud_list', { model: 'users' })
      expect(all.total).toBe(1)
    })
  })
})
