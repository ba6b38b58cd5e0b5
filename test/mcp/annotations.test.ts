import { createHash } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js'
import type { Tool } from '@modelcontextprotocol/sdk/types.js'
import { InMemoryTransport } from '@modelcontextprotocol/server'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { comments, posts, users } from '../../examples/demo/src/schema.ts'
import { createApiKey } from '../../src/api/index.ts'
import { runMakeMessaging } from '../../src/cli/commands/make-messaging.ts'
import { silentLogger } from '../../src/core/index.ts'
import type { PostgresDb } from '../../src/db/index.ts'
import { createModelRegistry, type Database } from '../../src/db/index.ts'
import { httpMethodAnnotations } from '../../src/mcp/annotations.ts'
import {
  createOpenApiBridgeServer,
  fetchOpenApiDocument,
  operationsFromDocument,
} from '../../src/mcp/bridge/openapi-bridge.ts'
import { registerDeveloperTools } from '../../src/mcp/developer/developer-tools.ts'
import { createDataTools, createMcpServer, type McpModelSource } from '../../src/mcp/index.ts'
import { type DemoUnderTest, startDemo } from '../demo/support.ts'
import { describeEachDatabase, type TestDatabase } from '../support/databases.ts'
import { call, connectInMemory, snapshot } from './support/client.ts'
import { createTestTables, insertUser, resetTestTables, schemaFor } from './support/schema.ts'

const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const

/** Every hint is stated (none left to the protocol's pessimistic defaults). */
function expectAllHints(tool: Tool): void {
  for (const hint of HINTS) {
    expect(typeof tool.annotations?.[hint], `${tool.name}.${hint}`).toBe('boolean')
  }
}

type Rows = Record<string, Array<Record<string, unknown>>>

/** The rows without `updated_at` (`updatedAt` in Drizzle's rows), which a repeated update bumps (not counted as an effect). */
function withoutClock(state: unknown): unknown {
  const rows = state as Rows
  return Object.fromEntries(
    Object.entries(rows).map(([table, list]) => [
      table,
      list.map(({ updated_at: _, updatedAt: __, ...rest }) => rest),
    ]),
  )
}

/**
 * Checks a tool's hints against what one call (and a repeat of it) did to the database:
 * read-only changed nothing; non-destructive left every existing row as it was; idempotent
 * repeated leaves the same state; and the opposite claims are shown true as well (a write
 * changed something, a destructive tool changed or removed an existing row, a non-idempotent
 * one repeated changed the state again), so no hint is stricter or looser than the tool.
 */
async function checkHints(
  database: Database,
  tool: Tool,
  run: () => Promise<{ isError: boolean; text: string }>,
): Promise<void> {
  await checkHintsOn(async () => (await snapshot(database)) as Rows, tool, run)
}

async function checkHintsOn(
  state: () => Promise<Rows>,
  tool: Tool,
  run: () => Promise<{ isError: boolean; text: string }>,
): Promise<void> {
  const hints = tool.annotations!
  const before = await state()
  const first = await run()
  expect(first.isError, `${tool.name}: ${first.text}`).toBe(false)
  const after = await state()
  if (hints.readOnlyHint) expect(after).toEqual(before)
  else expect(after).not.toEqual(before)
  const kept = (table: string) =>
    before[table]!.every((row) =>
      after[table]!.some((other) => JSON.stringify(other) === JSON.stringify(row)),
    )
  const intact = Object.keys(before).every(kept)
  if (hints.readOnlyHint || !hints.destructiveHint) expect(intact).toBe(true)
  else expect(intact).toBe(false)
  await run()
  const again = await state()
  if (hints.idempotentHint) expect(withoutClock(again)).toEqual(withoutClock(after))
  else expect(withoutClock(again)).not.toEqual(withoutClock(after))
}

describeEachDatabase('tool annotations tell the truth: the data tools', (backend) => {
  let test: TestDatabase
  let database: Database
  let models: McpModelSource
  let client: Client

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
    const tools = createDataTools({
      database,
      models,
      access: {
        // What each tool does once it runs; approvals (approvals.test.ts) hold it before that.
        approval: [],
        models: {
          notes: { tools: ['crud_list', 'crud_create', 'crud_update', 'crud_delete'] },
        },
      },
      logger: silentLogger(),
    })
    client = await connectInMemory(createMcpServer({ dataTools: { tools } }))
  })
  afterEach(async () => {
    await client.close()
  })

  it('states every hint on every data tool, and each holds for a call', async () => {
    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name)).toEqual([
      'crud_create',
      'crud_list',
      'crud_aggregate',
      'crud_update',
      'crud_delete',
    ])
    const byName = new Map(tools.map((tool) => [tool.name, tool]))
    for (const tool of tools) {
      expectAllHints(tool)
      expect(tool.annotations?.openWorldHint).toBe(false)
    }
    const note = (title: string) =>
      call(client, 'crud_create', { model: 'notes', data: { tenant_id: 't', title } })
    const first = (await note('First')).json as { id: number }
    await note('Second')
    await checkHints(database, byName.get('crud_list')!, () =>
      call(client, 'crud_list', { model: 'notes', sort: '-title' }),
    )
    await checkHints(database, byName.get('crud_aggregate')!, () =>
      call(client, 'crud_aggregate', { model: 'notes', count: true }),
    )
    await checkHints(database, byName.get('crud_create')!, () => note('Third'))
    await checkHints(database, byName.get('crud_update')!, () =>
      call(client, 'crud_update', { model: 'notes', id: first.id, data: { pinned: true } }),
    )
    // The repeated delete answers a "not found" tool error and changes nothing.
    await checkHints(database, byName.get('crud_delete')!, () =>
      call(client, 'crud_delete', { model: 'notes', id: first.id }),
    )
  })
})

describe('tool annotations tell the truth: the developer tools', () => {
  let root: string
  let client: Client

  /** Every file under the project root, with its content hash. */
  function tree(dir = root): Record<string, string> {
    const files: Record<string, string> = {}
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry)
      if (statSync(path).isDirectory()) Object.assign(files, tree(path))
      else files[path] = createHash('sha256').update(readFileSync(path)).digest('hex')
    }
    return files
  }

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'kiln-mcp-annotations-'))
    const kilnConfig = {
      dialect: 'sqlite' as const,
      schema: './schema.ts',
      out: './api',
      messaging: './app/messaging',
    }
    await runMakeMessaging({
      cwd: root,
      dir: join(root, 'app/messaging'),
      env: {},
      print: () => {},
    })
    const server = createMcpServer({
      register: [
        (s) => registerDeveloperTools(s, { root, kilnConfig, env: { MSG_APP_SECRET: 'x' } }),
      ],
    })
    client = await connectInMemory(server)
  })
  afterAll(async () => {
    await client?.close()
    rmSync(root, { recursive: true, force: true })
  })

  it('are read-only, idempotent and closed-world, and change no file of the project', async () => {
    const { tools } = await client.listTools()
    expect(tools).toHaveLength(3)
    for (const tool of tools) {
      expectAllHints(tool)
      expect(tool.annotations).toMatchObject({
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      })
      const before = tree()
      const first = await call(client, tool.name, {})
      expect(first.isError, `${tool.name}: ${first.text}`).toBe(false)
      const second = await call(client, tool.name, {})
      expect(tree()).toEqual(before)
      expect(second.text).toBe(first.text)
    }
  })
})

describe('tool annotations tell the truth: the OpenAPI bridge', () => {
  it('follows each operation’s HTTP method: GET reads, POST adds, PUT replaces, PATCH changes, DELETE removes', () => {
    const operation = { responses: { '200': { description: 'ok' } } }
    const operations = operationsFromDocument({
      openapi: '3.1.0',
      info: { title: 't', version: '1' },
      paths: {
        '/api/posts': { get: operation, post: operation },
        '/api/posts/{id}': {
          put: operation,
          patch: operation,
          delete: operation,
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        },
      },
    })
    const hints = Object.fromEntries(
      operations.map((op) => [op.method, op.tool.annotations as Record<string, boolean>]),
    )
    for (const annotations of Object.values(hints)) {
      expect(Object.keys(annotations).sort()).toEqual([...HINTS].sort())
      expect(annotations.openWorldHint).toBe(false)
    }
    expect(hints.get).toMatchObject({
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
    })
    expect(hints.post).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
    })
    expect(hints.put).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
    })
    expect(hints.patch).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
    })
    expect(hints.delete).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
    })
    expect(hints.delete).toEqual(httpMethodAnnotations('delete'))
  })
})

describe('tool annotations tell the truth: the OpenAPI bridge over the demo’s API', () => {
  let demo: DemoUnderTest
  let client: Client
  let authorId: number

  /** Every post and comment of the demo, to compare what a bridge call did. */
  async function state(): Promise<Rows> {
    const db = demo.ctx.database.db as PostgresDb
    const rows = async (table: typeof posts | typeof comments) =>
      JSON.parse(JSON.stringify(await db.select().from(table).orderBy(table.id)))
    return { posts: await rows(posts), comments: await rows(comments) }
  }

  beforeAll(async () => {
    demo = await startDemo()
    const { rawKey } = await createApiKey(demo.ctx.database, { name: 'bridge', scopes: ['*'] })
    const options = {
      apiUrl: 'http://demo.test',
      apiKey: rawKey,
      fetch: ((input: string | URL | Request, init?: RequestInit) =>
        demo.app.request(String(input), init)) as typeof globalThis.fetch,
    }
    const operations = operationsFromDocument(await fetchOpenApiDocument(options))
    const server = createOpenApiBridgeServer(operations, options)
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair()
    await server.connect(serverTransport)
    client = new SdkClient({ name: 'kiln-bridge-annotations', version: '1.0.0' })
    await client.connect(clientTransport)
    const db = demo.ctx.database.db as PostgresDb
    authorId = (await db.select({ id: users.id }).from(users))[0]!.id
  }, 120_000)
  afterAll(async () => {
    await client?.close()
    await demo?.close()
  })

  it('each posts operation does what its hints say', async () => {
    const { tools } = await client.listTools()
    const byName = new Map(tools.map((tool) => [tool.name, tool]))
    for (const tool of tools) {
      expectAllHints(tool)
      expect(tool.annotations?.openWorldHint).toBe(false)
    }
    const tool = (name: string) => {
      const found = byName.get(name)
      if (!found) throw new Error(`no bridge tool ${name}: ${[...byName.keys()].join(', ')}`)
      return found
    }
    const created = await call(client, 'post_posts', {
      body: { title: 'Bridged', body: 'b', author_id: authorId },
    })
    expect(created.isError, created.text).toBe(false)
    const id = (created.json as { data: { id: number } }).data.id
    const check = (name: string, args: Record<string, unknown>) =>
      checkHintsOn(state, tool(name), () => call(client, name, args))
    await check('get_posts', {})
    await check('get_posts_by_id', { id })
    await check('post_posts', { body: { title: 'Again', body: 'b', author_id: authorId } })
    await check('put_posts_by_id', {
      id,
      body: { title: 'Replaced', body: 'c', author_id: authorId },
    })
    await check('delete_posts_by_id', { id })
  }, 60_000)
})
