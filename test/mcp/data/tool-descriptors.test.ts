import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { silentLogger } from '../../../src/core/index.ts'
import { createModelRegistry, type Database } from '../../../src/db/index.ts'
import { describeChange } from '../../../src/mcp/approvals/index.ts'
import { accessOf, type WriteToolName } from '../../../src/mcp/data/access.ts'
import { DATA_TOOLS } from '../../../src/mcp/data/tools.ts'
import {
  createDataTools,
  createMcpServer,
  type McpAccessOptions,
  type McpCaller,
  type McpModelSource,
} from '../../../src/mcp/index.ts'
import { describeEachDatabase, type TestDatabase } from '../../support/databases.ts'
import { call, connectInMemory } from '../support/client.ts'
import { createTestTables, insertUser, resetTestTables, schemaFor } from '../support/schema.ts'

/**
 * One call of each data tool that its policy allows. A tool added without a line here fails
 * the suite: every descriptor is run under both scopes and through the approval page's words.
 */
const SAMPLE_CALLS: Record<string, Record<string, unknown>> = {
  crud_create: { model: 'notes', data: { tenant_id: 't', title: 'A' } },
  crud_list: { model: 'notes' },
  crud_aggregate: { model: 'notes', count: true },
  crud_update: { model: 'notes', id: 1, data: { title: 'B' } },
  crud_delete: { model: 'notes', id: 1 },
}

describe('each data tool is one descriptor', () => {
  it('names are unique, and every tool has a sample call here', () => {
    const names = DATA_TOOLS.map((tool) => tool.name)
    expect(new Set(names).size).toBe(names.length)
    expect(Object.keys(SAMPLE_CALLS).sort()).toEqual([...names].sort())
  })

  it('a descriptor reads or writes as the allow-list entry it runs under grants', () => {
    for (const tool of DATA_TOOLS) expect(tool.access, tool.name).toBe(accessOf(tool.allowedBy))
  })

  it('the read-only hint follows the descriptor: read tools read, write tools do not', () => {
    for (const tool of DATA_TOOLS) {
      expect(tool.annotations.readOnlyHint, tool.name).toBe(tool.access === 'read')
    }
  })

  it("the approval page words each writing call with its own tool's words", () => {
    for (const tool of DATA_TOOLS) {
      if (tool.access !== 'write') continue
      const call = { tool: tool.name as WriteToolName, args: { model: 'posts', id: 5 } }
      const summary = describeChange(call).summary
      expect(summary).toBe(tool.approval({ model: 'posts', id: '5' }))
      expect(summary).toContain('posts')
    }
    expect(describeChange({ tool: 'crud_delete', args: { model: 'posts', id: 5 } }).summary).toBe(
      'Delete posts record 5',
    )
  })

  it('a call of a tool no descriptor words is never described as creating a record', () => {
    // A writing tool added later, whose descriptor the page does not know.
    const tool = 'crud_archive' as WriteToolName
    const change = describeChange({ tool, args: { model: 'posts', id: 7 } })
    expect(change.summary).toBe('Run crud_archive on posts record 7')
  })
})

const ACCESS: McpAccessOptions = {
  unlisted: 'none',
  approval: [],
  models: {
    users: { tools: ['crud_list'] },
    notes: { tools: ['crud_list', 'crud_create', 'crud_update', 'crud_delete'] },
  },
}

describeEachDatabase('the data tools as their descriptors say', (backend) => {
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

  it("lists each tool with its descriptor's title and annotations", async () => {
    const client = await connect({ userId: '1' })
    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name)).toEqual(DATA_TOOLS.map((tool) => tool.name))
    for (const listed of tools) {
      const tool = DATA_TOOLS.find((candidate) => candidate.name === listed.name)!
      expect(listed.title).toBe(tool.title)
      expect(listed.annotations).toEqual(tool.annotations)
    }
  })

  it('a read tool runs with the read scope alone; a write tool needs the write scope', async () => {
    const client = await connect({ userId: '1', tenantId: 't', scopes: ['mcp:read'] })
    for (const tool of DATA_TOOLS) {
      const outcome = await call(client, tool.name, SAMPLE_CALLS[tool.name]!)
      if (tool.access === 'read')
        expect(outcome.isError, `${tool.name}: ${outcome.text}`).toBe(false)
      else expect(outcome.text).toBe(`${tool.allowedBy} needs the mcp:write scope`)
    }
  })

  it("the model argument names only the models the caller's grant reaches", async () => {
    const modelsOf = async (client: Client, name: string) => {
      const tool = (await client.listTools()).tools.find((candidate) => candidate.name === name)
      const model = (tool!.inputSchema.properties as Record<string, { description: string }>).model
      return model!.description
    }
    const notesOnly = await connect({ userId: '1', grant: { notes: ['read', 'create'] } })
    expect(await modelsOf(notesOnly, 'crud_list')).toBe('The model (resource name). One of: notes')
    expect(await modelsOf(notesOnly, 'crud_aggregate')).toMatch(/One of: notes$/)
    const everything = await connect({ userId: '1' })
    expect(await modelsOf(everything, 'crud_list')).toMatch(/One of: notes, users$/)
    // Only notes can be created: the policy lets no tool create users.
    expect(await modelsOf(everything, 'crud_create')).toMatch(/One of: notes$/)
  })
})
