import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { silentLogger } from '../../../src/core/index.ts'
import { createModelRegistry, type Database } from '../../../src/db/index.ts'
import {
  createDataTools,
  createMcpServer,
  type McpAccessOptions,
  type McpCaller,
  type McpModelSource,
} from '../../../src/mcp/index.ts'
import { describeEachDatabase, type TestDatabase } from '../../support/databases.ts'
import { call, connectInMemory, ok, snapshot } from '../support/client.ts'
import { createTestTables, insertUser, resetTestTables, schemaFor } from '../support/schema.ts'

const ACCESS: McpAccessOptions = {
  unlisted: 'none',
  // The grant alone is under test here; approvals have their own suite (approvals.test.ts).
  approval: [],
  models: {
    users: { tools: ['crud_list'] },
    notes: { tools: ['crud_list', 'crud_create', 'crud_update', 'crud_delete'] },
  },
}

describeEachDatabase('the data tools follow the grant the person approved', (backend) => {
  let test: TestDatabase
  let database: Database
  let models: McpModelSource
  const clients: Client[] = []

  async function connect(caller: McpCaller): Promise<Client> {
    const tools = createDataTools({ database, models, access: ACCESS, logger: silentLogger() })
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

  it('describes the policy for the consent page', () => {
    const tools = createDataTools({ database, models, access: ACCESS, logger: silentLogger() })
    expect(tools.describeAccess()).toEqual({
      scopes: { read: 'mcp:read', write: 'mcp:write' },
      models: [
        { model: 'notes', actions: ['read', 'create', 'update', 'delete'] },
        { model: 'users', actions: ['read'] },
      ],
    })
  })

  it('lists only crud_list for a read-only grant and refuses a write', async () => {
    const client = await connect({
      userId: '1',
      scopes: ['mcp:read', 'mcp:write'],
      grant: { notes: ['read'], users: ['read'] },
    })
    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name)).toEqual(['crud_list', 'crud_aggregate'])
    const before = await snapshot(database)
    const created = await call(client, 'crud_create', {
      model: 'notes',
      data: { tenant_id: 't', title: 'A' },
    })
    expect(created).toMatchObject({
      isError: true,
      text: 'Not granted: crud_create on notes (the user did not allow it)',
    })
    expect(await snapshot(database)).toEqual(before)
    expect((await ok<{ total: number }>(client, 'crud_list', { model: 'users' })).total).toBe(1)
  })

  it('refuses a model the grant does not name, and an action it does not give', async () => {
    const client = await connect({
      userId: '1',
      scopes: ['mcp:read', 'mcp:write'],
      grant: { notes: ['read', 'create'] },
    })
    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'crud_aggregate',
      'crud_create',
      'crud_list',
    ])
    const users = await call(client, 'crud_list', { model: 'users' })
    expect(users.isError).toBe(true)
    expect(users.text).toBe('Not granted: crud_list on users (the user did not allow it)')
    const created = await ok<{ id: number }>(client, 'crud_create', {
      model: 'notes',
      data: { tenant_id: 't', title: 'A' },
    })
    const before = await snapshot(database)
    const update = await call(client, 'crud_update', {
      model: 'notes',
      id: created.id,
      data: { title: 'B' },
    })
    expect(update).toMatchObject({
      isError: true,
      text: 'Not granted: crud_update on notes (the user did not allow it)',
    })
    expect(await snapshot(database)).toEqual(before)
  })

  it('lists no tool for an empty grant', async () => {
    const client = await connect({ userId: '1', scopes: ['mcp:read'], grant: {} })
    expect((await client.listTools()).tools).toEqual([])
    expect(await call(client, 'crud_list', { model: 'users' })).toMatchObject({
      isError: true,
      text: 'Not granted: crud_list on users (the user did not allow it)',
    })
    // The checks before the grant still come first: the model, then the tool.
    expect((await call(client, 'crud_list', { model: 'nope' })).text).toBe(
      'Unknown model "nope". Valid models: notes, users',
    )
    expect((await call(client, 'crud_delete', { model: 'users', id: 1 })).text).toBe(
      'crud_delete is not allowed on users',
    )
  })

  it('answers a read-only grant calling crud_delete "not granted", before any approval', async () => {
    // The default policy holds crud_delete for the person's approval: the grant is checked first.
    const { approval: _none, ...heldByDefault } = ACCESS
    const tools = createDataTools({
      database,
      models,
      access: heldByDefault,
      logger: silentLogger(),
    })
    const client = await connectInMemory(
      createMcpServer({
        dataTools: {
          tools,
          caller: { userId: '1', scopes: ['mcp:read', 'mcp:write'], grant: { notes: ['read'] } },
        },
      }),
    )
    clients.push(client)
    const before = await snapshot(database)
    expect(await call(client, 'crud_delete', { model: 'notes', id: 1 })).toMatchObject({
      isError: true,
      text: 'Not granted: crud_delete on notes (the user did not allow it)',
    })
    expect(await snapshot(database)).toEqual(before)
  })

  it('leaves the policy alone for a caller without a grant (stdio, a custom caller)', async () => {
    const client = await connect({ userId: '1' })
    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'crud_aggregate',
      'crud_create',
      'crud_delete',
      'crud_list',
      'crud_update',
    ])
  })
})

describe('createMcpServer, answering calls to tools it does not list', () => {
  it('lists none when built with no tool, and an app may still add its own after', async () => {
    const empty = await connectInMemory(createMcpServer())
    expect((await empty.listTools()).tools).toEqual([])
    await expect(call(empty, 'crud_list', { model: 'users' })).rejects.toThrow(
      'Tool crud_list not found',
    )
    await empty.close()
    const server = createMcpServer()
    server.registerTool('ping', { description: 'Answers pong' }, () => ({
      content: [{ type: 'text', text: 'pong' }],
    }))
    const client = await connectInMemory(server)
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['ping'])
    expect((await call(client, 'ping', {})).text).toBe('pong')
    await client.close()
  })
})
