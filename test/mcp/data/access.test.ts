import { Writable } from 'node:stream'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { pgTable, text as pgText, serial } from 'drizzle-orm/pg-core'
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { declareRequests, defineListQuery } from '../../../src/api/index.ts'
import { createLogger, silentLogger } from '../../../src/core/index.ts'
import { createModelRegistry, type Database } from '../../../src/db/index.ts'
import { resolveAccess } from '../../../src/mcp/data/access-resolve.ts'
import {
  type AuthorizeRequest,
  createDataTools,
  createMcpServer,
  type McpAccessOptions,
  type McpCaller,
  type McpModelSource,
} from '../../../src/mcp/index.ts'
import { describeEachDatabase, type TestDatabase } from '../../support/databases.ts'
import { call, connectInMemory, ok, snapshot } from '../support/client.ts'
import { createTestTables, insertUser, resetTestTables, schemaFor } from '../support/schema.ts'

describeEachDatabase('the access policy of the data tools', (backend) => {
  let test: TestDatabase
  let database: Database
  let models: McpModelSource
  const clients: Client[] = []

  async function connect(access: McpAccessOptions, caller?: McpCaller): Promise<Client> {
    const tools = createDataTools({ database, models, access, logger: silentLogger() })
    const client = await connectInMemory(createMcpServer({ dataTools: { tools, caller } }))
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
    await insertUser(database, 'ada@example.com', 'Ada')
  })
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close()
  })

  it('reaches no model by default, and the start-up log says how to grant one', async () => {
    let logged = ''
    const destination = new Writable({
      write(chunk, _encoding, callback) {
        logged += chunk
        callback()
      },
    })
    const logger = createLogger({ level: 'info', destination })
    const tools = createDataTools({ database, models, logger })
    const client = await connectInMemory(createMcpServer({ dataTools: { tools } }))
    clients.push(client)
    expect((await client.listTools()).tools).toEqual([])
    const line = JSON.parse(logged.trim().split('\n')[0]!)
    expect(line.models).toEqual(['notes', 'users'])
    expect(line.msg).toMatch(
      /grant one with access: \{ models: \{ notes: \{ tools: \['crud_list'\] \} \} \}/,
    )
  })

  it('suggests granting a model without credential columns, never users first', async () => {
    let logged = ''
    const destination = new Writable({
      write(chunk, _encoding, callback) {
        logged += chunk
        callback()
      },
    })
    const logger = createLogger({ level: 'info', destination })
    // users (with its password column) comes first: the example still names notes.
    const usersFirst = { models: [...models.models].sort((a) => (a.resource === 'users' ? -1 : 1)) }
    createDataTools({ database, models: usersFirst, logger })
    const line = JSON.parse(logged.trim().split('\n')[0]!)
    expect(line.models).toEqual(['users', 'notes'])
    expect(line.msg).toMatch(/grant one with access: \{ models: \{ notes: /)
  })

  it("is read-only for unlisted models with unlisted: 'read'", async () => {
    const client = await connect({ unlisted: 'read' })
    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name)).toEqual(['crud_list', 'crud_aggregate'])
    const page = await ok<{ total: number }>(client, 'crud_list', { model: 'users' })
    expect(page.total).toBe(1)
  })

  it('offers per model only the tools and fields it lists', async () => {
    const client = await connect({
      unlisted: 'none',
      models: {
        notes: {
          tools: ['crud_list', 'crud_create'],
          read: ['id', 'title'],
          write: ['tenant_id', 'title'],
        },
      },
    })
    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'crud_aggregate',
      'crud_create',
      'crud_list',
    ])
    const note = await ok(client, 'crud_create', {
      model: 'notes',
      data: { tenant_id: 't', title: 'A' },
    })
    expect(note).toEqual({ id: 1, title: 'A' })
    const pinned = await call(client, 'crud_create', {
      model: 'notes',
      data: { tenant_id: 't', title: 'B', pinned: true },
    })
    expect(pinned.text).toMatch(
      /Unknown field\(s\) for create on notes: "pinned"\. Valid fields: tenant_id, title$/,
    )
    const hidden = await call(client, 'crud_list', { model: 'notes', filters: { pinned: false } })
    expect(hidden.text).toMatch(/Unknown filter field\(s\) for notes: "pinned"/)
    const users = await call(client, 'crud_list', { model: 'users' })
    expect(users.text).toBe('Unknown model "users". Valid models: notes')
  })

  it('refuses a tool a model does not list, and lets authorize narrow the rest', async () => {
    const seen: AuthorizeRequest[] = []
    const client = await connect(
      {
        unlisted: 'read',
        models: { notes: { tools: ['crud_list', 'crud_create', 'crud_update'] } },
        authorize: (request) => {
          seen.push(request)
          return request.action !== 'crud_update' || request.caller?.userId === 'owner'
        },
      },
      { userId: 'guest' },
    )
    await ok(client, 'crud_create', { model: 'notes', data: { tenant_id: 't', title: 'A' } })
    const before = await snapshot(database)
    const update = await call(client, 'crud_update', {
      model: 'notes',
      id: 1,
      data: { title: 'B' },
    })
    expect(update).toMatchObject({ isError: true, text: 'Not allowed: crud_update on notes' })
    const write = await call(client, 'crud_update', { model: 'users', id: 1, data: { name: 'B' } })
    expect(write).toMatchObject({ isError: true, text: 'crud_update is not allowed on users' })
    expect(await snapshot(database)).toEqual(before)
    expect(seen.map(({ action, model, id }) => [action, model, id])).toEqual([
      ['crud_create', 'notes', undefined],
      ['crud_update', 'notes', 1],
    ])
    expect(seen[0]!.data).toEqual({ tenant_id: 't', title: 'A' })
  })

  it('checks the caller scopes per tool when the caller has scopes', async () => {
    const client = await connect({ unlisted: 'all' }, { userId: '1', scopes: ['mcp:read'] })
    await ok(client, 'crud_list', { model: 'users' })
    const write = await call(client, 'crud_update', { model: 'users', id: 1, data: { name: 'B' } })
    expect(write).toMatchObject({ isError: true, text: 'crud_update needs the mcp:write scope' })
  })

  it('fails closed for tenants: a model without a tenant column is refused unless global', async () => {
    const client = await connect(
      { unlisted: 'all', models: { notes: { tools: ['crud_list'] } } },
      { userId: '1', tenantId: 'acme' },
    )
    const users = await call(client, 'crud_list', { model: 'users' })
    expect(users).toMatchObject({ isError: true, text: 'users is not available to tenants' })
    await ok(client, 'crud_list', { model: 'notes' })
    const shared = await connect(
      { models: { users: { global: true, read: ['id', 'name'] } } },
      { userId: '1', tenantId: 'acme' },
    )
    const page = await ok<{ records: unknown[] }>(shared, 'crud_list', { model: 'users' })
    expect(page.records).toEqual([{ id: 1, name: 'Ada' }])
  })

  it('uses the configured tenant column and requires a tenant when told to', async () => {
    const policy = { unlisted: 'none', requireTenant: true, models: { notes: {} } } as const
    const client = await connect(policy, { userId: '1' })
    const anonymous = await call(client, 'crud_list', { model: 'notes' })
    expect(anonymous.text).toBe('This server needs a caller with a tenant')
  })

  describe('refuses to start on a policy that would leak', () => {
    const cases: Array<[string, McpAccessOptions, RegExp]> = [
      ['an unknown model', { models: { invoices: {} } }, /unknown model "invoices"/],
      [
        'an unknown field',
        { models: { notes: { read: ['colour'] } } },
        /notes\.colour in read: no such field/,
      ],
      [
        'a credential field to read',
        { models: { users: { read: ['email', 'password_hash'] } } },
        /users\.password_hash in read: a credential field is never readable/,
      ],
      [
        'a credential field to write',
        { models: { users: { write: ['password_hash'] } } },
        /users\.password_hash in write: credentials \(unless listed in expose\) and created_at\/updated_at are never writable/,
      ],
      [
        'a timestamp to write',
        { models: { notes: { write: ['created_at'] } } },
        /notes\.created_at in write/,
      ],
      [
        'a tenant app with a model that has no tenant column',
        { requireTenant: true, unlisted: 'read' },
        /users has no tenant_id column; declare it global or unlisted/,
      ],
    ]
    for (const [title, access, message] of cases) {
      it(title, () => {
        expect(() => resolveAccess(models, access)).toThrow(message)
      })
    }

    /** A table of people (id, name, email) on this backend's dialect, never created. */
    const peopleTable = (name: string) =>
      database.dialect === 'postgres'
        ? pgTable(name, {
            id: serial('id').primaryKey(),
            name: pgText('name'),
            email: pgText('email'),
          })
        : sqliteTable(name, {
            id: integer('id').primaryKey(),
            name: text('name'),
            email: text('email'),
          })

    it('a declared list query not handed over still rules: read names no field it hides', () => {
      const people = peopleTable('people')
      const registry = createModelRegistry({ people }, database.dialect)
      defineListQuery(people, { fields: ['id', 'name'] })
      expect(() =>
        resolveAccess(registry, { models: { people: { read: ['id', 'email'] } } }),
      ).toThrow(/people\.email in read: its list query does not show it/)
      const policy = resolveAccess(registry, { models: { people: {} } })
      const readable = policy.of(registry.models[0]!)!.readable.map((column) => column.name)
      expect(readable).toEqual(['id', 'name'])
    })

    it('reproduction: tools made before the controller declares its list query still keep to it', () => {
      const people = peopleTable('people_late')
      const registry = createModelRegistry({ people }, database.dialect)
      const model = registry.models[0]!
      // The MCP tools first, then the module with the controller (its defineListQuery).
      const policy = resolveAccess(registry, { models: { people_late: {} } })
      defineListQuery(people, { fields: ['id', 'name'] })
      expect(policy.of(model)!.readable.map((column) => column.name)).toEqual(['id', 'name'])
    })

    it('request schemas declared beside the controller rule writes, whenever they are declared', () => {
      const people = peopleTable('people_written')
      const registry = createModelRegistry({ people }, database.dialect)
      const model = registry.models[0]!
      const policy = resolveAccess(registry, {
        models: { people_written: { tools: ['crud_create', 'crud_update'] } },
      })
      const names = (columns: readonly { name: string }[]) => columns.map((column) => column.name)
      expect(names(policy.of(model)!.creatable)).toEqual(['name', 'email'])
      // The controller's module, imported after the tools were made.
      const create = z.strictObject({ name: z.string() })
      declareRequests(people, { create, update: create.partial() })
      expect(names(policy.of(model)!.creatable)).toEqual(['name'])
      expect(names(policy.of(model)!.updatable)).toEqual(['name'])
      expect(() =>
        resolveAccess(registry, {
          models: { people_written: { tools: ['crud_create'], write: ['email'] } },
        }),
      ).toThrow(/people_writtens\.email in write: its create request does not take it/)
    })

    it('list queries: an unknown model, another table’s query, or read beside a query', () => {
      const notes = models.models.find((model) => model.resource === 'notes')!
      const users = models.models.find((model) => model.resource === 'users')!
      const notesQuery = defineListQuery(notes.table)
      expect(() => resolveAccess(models, {}, { invoices: notesQuery })).toThrow(
        /mcp queries: unknown model "invoices"/,
      )
      expect(() => resolveAccess(models, {}, { users: notesQuery })).toThrow(
        /mcp queries: users is the list query of notes/,
      )
      expect(() =>
        resolveAccess(models, { models: { notes: { read: ['id'] } } }, { notes: notesQuery }),
      ).toThrow(/notes\.read: its readable fields are its list query's/)
      // The query's fields are the readable ones: never a credential of the model.
      const policy = resolveAccess(
        models,
        { models: { notes: {}, users: {} } },
        { notes: notesQuery, users: defineListQuery(users.table) },
      )
      const readable = policy.of(users)!.readable.map((column) => column.name)
      expect(readable).toEqual(defineListQuery(users.table).fields.map((field) => field.name))
      expect(readable).not.toContain('password_hash')
    })
  })
})
