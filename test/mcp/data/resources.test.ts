import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest'
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
import { connectInMemory } from '../support/client.ts'
import { createTestTables, schemaFor } from '../support/schema.ts'

const ACCESS: McpAccessOptions = {
  models: {
    users: { tools: ['crud_list'], global: true, read: ['id', 'name', 'created_at'] },
    notes: { tools: ['crud_list', 'crud_create', 'crud_update', 'crud_delete'] },
  },
}

interface Schema {
  properties: Record<string, Record<string, unknown>>
  'x-kiln': {
    tools: string[]
    creatable: string[]
    updatable: string[]
    filterable: string[]
  }
}

describeEachDatabase('model resources and completions follow the caller’s reach', (backend) => {
  let test: TestDatabase
  let database: Database
  let models: McpModelSource
  const clients: Client[] = []

  async function connect(caller: McpCaller | undefined, access = ACCESS): Promise<Client> {
    const tools = createDataTools({ database, models, access, logger: silentLogger() })
    const client = await connectInMemory(createMcpServer({ dataTools: { tools, caller } }))
    clients.push(client)
    return client
  }
  const uris = async (client: Client) =>
    (await client.listResources()).resources.map((resource) => resource.uri)
  const read = async (client: Client, uri: string) =>
    JSON.parse(
      ((await client.readResource({ uri })).contents[0] as { text: string }).text,
    ) as Schema
  const completeModel = async (client: Client, value: string) =>
    (
      await client.complete({
        ref: { type: 'ref/resource', uri: 'kiln://models/{model}' },
        argument: { name: 'model', value },
      })
    ).completion.values
  const completeField = async (client: Client, value: string, model?: string) =>
    (
      await client.complete({
        ref: { type: 'ref/resource', uri: 'kiln://models/{model}/fields/{field}' },
        argument: { name: 'field', value },
        ...(model ? { context: { arguments: { model } } } : {}),
      })
    ).completion.values

  beforeAll(async () => {
    test = await backend.create()
    database = test.database
    await createTestTables(database)
    models = createModelRegistry(schemaFor(database), database.dialect)
  })
  afterAll(async () => {
    await test.cleanup()
  })
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close()
  })

  it('describes each reachable model with its readable fields only, never credentials', async () => {
    const client = await connect(undefined)
    expect(await uris(client)).toEqual(['kiln://models/notes', 'kiln://models/users'])
    const users = await read(client, 'kiln://models/users')
    expect(Object.keys(users.properties)).toEqual(['id', 'name', 'created_at'])
    expect(users['x-kiln']).toMatchObject({ tools: ['crud_list'], creatable: [], updatable: [] })
    for (const field of Object.values(users.properties)) expect(field.readOnly).toBe(true)
    const notes = await read(client, 'kiln://models/notes')
    expect(notes.properties.title).toMatchObject({
      type: 'string',
      maxLength: 100,
      'x-kiln': { filterable: true, sortable: true },
    })
    expect(notes.properties.body).toMatchObject({ type: ['string', 'null'] })
    expect(notes.properties.pinned).toMatchObject({ type: 'boolean' })
    expect(notes.properties.priority).toMatchObject({ type: 'integer' })
    expect(notes.properties.pinned!.readOnly).toBeUndefined()
    expect(notes.properties.updated_at).toMatchObject({ readOnly: true })
    expect(notes['x-kiln'].tools).toEqual([
      'crud_create',
      'crud_list',
      'crud_update',
      'crud_delete',
    ])
    // Unknown, and names the policy hides, read as not found (the same error either way).
    for (const uri of [
      'kiln://models/users/fields/password_hash',
      'kiln://models/users/fields/email',
      'kiln://models/invoices',
      'kiln://models/notes/fields/%E0%A4%A',
    ]) {
      await expect(client.readResource({ uri })).rejects.toMatchObject({
        code: -32602,
        data: { uri },
      })
    }
    expect(await completeField(client, '', 'users')).toEqual(['id', 'name', 'created_at'])
    expect(await completeField(client, 'pa', 'users')).toEqual([])
    expect(await completeField(client, 'p')).toEqual(['pinned', 'priority'])
    expect(await completeModel(client, 'N')).toEqual(['notes'])
  })

  it('offers only the models the grant names, and only the granted tools', async () => {
    const client = await connect({
      userId: '1',
      scopes: ['mcp:read', 'mcp:write'],
      grant: { notes: ['read', 'update'] },
    })
    expect(await uris(client)).toEqual(['kiln://models/notes'])
    const notes = await read(client, 'kiln://models/notes')
    expect(notes['x-kiln']).toMatchObject({ tools: ['crud_list', 'crud_update'], creatable: [] })
    expect(notes['x-kiln'].updatable).toContain('title')
    await expect(client.readResource({ uri: 'kiln://models/users' })).rejects.toMatchObject({
      code: -32602,
    })
    expect(await completeModel(client, '')).toEqual(['notes'])
    expect(await completeField(client, '', 'users')).toEqual([])
  })

  it('follows the token’s scopes: a read-only token sees read-only fields', async () => {
    const client = await connect({ userId: '1', scopes: ['mcp:read'] })
    const notes = await read(client, 'kiln://models/notes')
    expect(notes['x-kiln']).toMatchObject({ tools: ['crud_list'], creatable: [], updatable: [] })
    for (const field of Object.values(notes.properties)) expect(field.readOnly).toBe(true)
    const none = await connect({ userId: '1', scopes: ['profile'] })
    expect(await uris(none)).toEqual([])
    expect(await completeModel(none, '')).toEqual([])
  })

  it('keeps a tenant’s caller away from models without a tenant column', async () => {
    const access: McpAccessOptions = {
      models: { users: { tools: ['crud_list'] }, notes: { tools: ['crud_list'] } },
    }
    const client = await connect({ userId: '1', tenantId: 't1' }, access)
    expect(await uris(client)).toEqual(['kiln://models/notes'])
    expect(await completeModel(client, 'u')).toEqual([])
  })
})
